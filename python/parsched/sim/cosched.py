"""Seed 003 from Python: coscheduling on a network of workstations (Nagar,
Banerjee, Sivasubramaniam and Das, SPAA 1999).

* :func:`simulate_cosched` — one configuration (:class:`CoschedConfig`), its
  replications and their summary (:class:`CoschedResult`);
* :func:`cosched_sweep` — schemes × workloads from a base configuration, one
  row each, run in parallel threads (the core releases the GIL).

The model and its parameters: docs/policies/cosched.md; the result fields, the
timeline CSV and the JSON: docs/formats/cosched-outputs.md.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parsched.config import CoschedConfig
from parsched.config.table import summary_keys
from parsched.errors import ConfigError, TimeLimitError, shown
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["COSCHED_SUMMARY_KEYS", "RUN_COLUMNS", "SWEEP_COLUMNS", "CoschedResult",
           "cosched_applications", "cosched_sweep", "simulate_cosched"]

#: Columns of :attr:`CoschedResult.runs`: one row per replication.
RUN_COLUMNS = (
    "seed", "completion_time", "mean_job_time", "cv", "over_ideal", "spin_time", "latency_us",
    "small_latency_us", "context_switches", "interrupts", "boosts", "boosts_capped", "wakeups",
    "lost_wakeups", "blocks", "yields", "messages", "slot_switches", "events", "wall_seconds",
)

#: Columns of :func:`cosched_sweep`'s rows.
SWEEP_COLUMNS = ("scheme", "workload", "completion_time", "ci90", "cv", "over_ideal",
                 "mean_job_time", "livelock")

#: Keys of :attr:`CoschedResult.summary` (docs/glossary.md).
COSCHED_SUMMARY_KEYS = summary_keys("cosched")

#: The core's name of ``over_ideal`` (before "slowdown" got one meaning for all
#: models: response / run time).
_CORE_OVER_IDEAL = "slowdown"


def _core():
    from parsched.sim.api import core

    return core()


@dataclass(frozen=True, eq=False, repr=False)
class CoschedResult(SimResult):
    """The outcome of one :func:`simulate_cosched` call (times in seconds of
    simulated time from the launch, time 0).

    ``completion_time`` (the last job's finish), ``job_completion_times`` (each
    job's finish, in the workload's order), ``mean_job_time``, ``cv`` (sample
    standard deviation over mean of the job times: fairness) and ``comm_share``
    (each job's share of its run in sends and receives) are means over the
    replications; ``completion_time_ci90`` is the 90% confidence half-width of
    the completion time (NaN with one replication); ``over_ideal`` is
    (completion_time − ideal) / ideal, ideal = jobs × alone_s × scale (named
    ``slowdown`` before; that name now means response / run time everywhere,
    docs/glossary.md). ``summary`` holds the scalars
    (:data:`COSCHED_SUMMARY_KEYS`); ``runs``
    has one row per replication (:data:`RUN_COLUMNS`); ``timeline`` is the
    first replication's CPU shares at the probed node: ``time_s`` (end of each
    probe interval) and one column per job, ``"J:NAME"`` (e.g. ``"0:LIFE12"``).
    Results compare by identity (they hold DataFrames): compare ``to_dict()``.
    """

    _HEADLINE = ("scheme", "jobs", "completion_time", "completion_time_ci90",
                 "job_completion_times", "cv", "over_ideal")
    FRAMES = ("runs", "timeline")

    config: CoschedConfig
    scheme: str
    jobs: list[str]
    completion_time: float
    completion_time_ci90: float
    job_completion_times: list[float]
    mean_job_time: float
    cv: float
    over_ideal: float
    ideal: float
    comm_share: list[float]
    #: one dict per replication (the columns of :attr:`runs`, in order)
    run_rows: list[dict[str, Any]] = field(repr=False)
    #: ``time_s`` and one list per job label (the columns of :attr:`timeline`)
    timeline_columns: dict[str, list[float]] = field(repr=False)

    @property
    def runs(self) -> pd.DataFrame:
        """One row per replication (:data:`RUN_COLUMNS`, then any other number
        the core reports), built on first use."""
        cached = self.__dict__.get("_runs")
        if cached is None:
            import pandas as pd

            cols = list(self.run_rows[0]) if self.run_rows else list(RUN_COLUMNS)
            cached = pd.DataFrame(self.run_rows, columns=cols)
            object.__setattr__(self, "_runs", cached)
        return cached

    @property
    def timeline(self) -> pd.DataFrame:
        """The first replication's CPU shares at the probed node: ``time_s`` and
        one column per job label, built on first use."""
        cached = self.__dict__.get("_timeline")
        if cached is None:
            import pandas as pd

            cached = pd.DataFrame(self.timeline_columns,
                                  columns=["time_s", *self.job_labels])
            object.__setattr__(self, "_timeline", cached)
        return cached

    @property
    def job_labels(self) -> list[str]:
        """The timeline's job columns, ``"J:NAME"``."""
        return _labels(self.jobs)

    @property
    def summary(self) -> dict[str, Any]:
        """The scalars (:data:`COSCHED_SUMMARY_KEYS`): ``events`` and
        ``wall_seconds`` summed over the replications."""
        out: dict[str, Any] = {k: getattr(self, k) for k in COSCHED_SUMMARY_KEYS[:7]}
        out["events"] = int(sum(int(r.get("events", 0)) for r in self.run_rows))
        out["wall_seconds"] = float(sum(float(r.get("wall_seconds", 0.0))
                                        for r in self.run_rows))
        return out

    @property
    def slowdown(self) -> float:
        """Deprecated name of :attr:`over_ideal`."""
        warnings.warn("CoschedResult.slowdown is now over_ideal ((completion − ideal) / "
                      "ideal; docs/glossary.md)", DeprecationWarning, stacklevel=2)
        return self.over_ideal

    def _extra_dict(self) -> dict[str, Any]:
        return {
            "jobs": list(self.jobs),
            "job_completion_times": list(self.job_completion_times),
            "comm_share": list(self.comm_share),
            "runs": [dict(r) for r in self.run_rows],
            "timeline": {
                "time_s": list(self.timeline_columns["time_s"]),
                "shares": {c: list(self.timeline_columns[c]) for c in self.job_labels},
            },
        }

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON-safe values (NaN and infinities as None):
        the summary, ``jobs``, ``job_completion_times``, ``comm_share``,
        ``runs`` (a list of rows), ``timeline`` (``time_s`` and ``shares``:
        job label → list) and ``config`` (the fields of :attr:`config`)."""
        return super().to_dict()

    def plot_timeline(self, ax: Any = None, *, kind: str = "area",
                      title: str | None = None) -> Any:
        """The probed node's CPU share of every job over time, as in the paper's
        Figures 2-3: ``kind="area"`` stacks the shares (their sum is the node's
        busy share), ``kind="line"`` draws one line per job. Draws on ``ax`` if
        given, else on a new figure (matplotlib's ``Figure``, no pyplot state);
        returns the figure. Save it with ``fig.savefig("timeline.png")``."""
        if kind not in ("area", "line"):
            raise ConfigError("kind", f"{shown(kind)} is not a choice", "area, line")
        if ax is None:
            from matplotlib.figure import Figure

            fig = Figure(figsize=(9, 4.8), layout="constrained")
            ax = fig.subplots()
        else:
            fig = ax.figure
        tl = self.timeline
        t = tl["time_s"].to_numpy()
        # each row holds the share over the interval ending at time_s: draw steps
        starts = [0.0, *t[:-1]]
        xs = [x for a, b in zip(starts, t, strict=True) for x in (a, b)]
        cols = {c: [v for v in tl[c].to_numpy() for _ in (0, 1)] for c in self.job_labels}
        if kind == "area":
            if xs:
                ax.stackplot(xs, *cols.values(), labels=list(cols), alpha=0.85)
        else:
            for c, ys in cols.items():
                ax.plot(xs, ys, label=c, lw=1.2)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"CPU share at node {self.config.probe_node}")
        ax.set_ylim(0, 1.02 if kind == "area" else max(1.02, *(max(v, default=0) for v in
                                                                cols.values())))
        ax.set_xlim(0, float(t[-1]) if len(t) else 1.0)
        ax.set_title(title or f"{self.scheme} on {', '.join(self.jobs)}: CPU shares over time")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize="small",
                  ncol=min(6, max(1, len(cols))), frameon=False)
        return fig


def _renamed(out: Mapping[str, Any]) -> dict[str, Any]:
    """The core's output (or one of its runs) with its ``slowdown`` named
    ``over_ideal``, in the same place."""
    return {("over_ideal" if k == _CORE_OVER_IDEAL else k): v for k, v in out.items()}


def _labels(jobs: Sequence[str]) -> list[str]:
    return [f"{j}:{name}" for j, name in enumerate(jobs)]


def cosched_applications(config: CoschedConfig | Mapping[str, Any] | None = None,
                         **overrides: Any) -> pd.DataFrame:
    """How the paper's applications are sized from Table 2 and its text
    (docs/policies/cosched.md, "The applications"): one row per application
    (``app``, ``size``, ``iterations``, ``compute_us``, ``share`` alone,
    ``paper_share``), with the solved machine constants in ``df.attrs``
    (``jitter``, ``mflops``) beside the assumed ones. With a ``config``, for
    its message costs (what ``resize_apps`` runs). Example:
    ``parsched.cosched_applications(per_byte_ns=60).set_index("app")``.
    """
    import pandas as pd

    from parsched import _core

    given = config is not None or bool(overrides)
    cfg = _as_config(config, overrides)
    rep = _core.cosched_applications(cfg.core_values() if given else None)
    df = pd.DataFrame(rep.pop("apps"))
    df.attrs.update(rep)
    return df


def _as_config(config: CoschedConfig | Mapping[str, Any] | None,
               overrides: Mapping[str, Any]) -> CoschedConfig:
    if config is None:
        cfg = CoschedConfig.from_dict(overrides) if overrides else CoschedConfig()
        return cfg
    if isinstance(config, CoschedConfig):
        cfg = config
    elif isinstance(config, Mapping):
        cfg = CoschedConfig.from_dict(config)
    else:
        raise TypeError(
            f"config must be a CoschedConfig or a mapping, not {type(config).__name__}")
    return cfg.with_(**overrides) if overrides else cfg


def _workers(workers: int | None, reps: int) -> int:
    if workers is None:
        return max(1, min(reps, os.cpu_count() or 1))
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", f"{shown(workers)} is out of range", "integer >= 1")
    return workers


def _call(cfg: CoschedConfig, *, workers: int, audit: bool, boost: Any = None) -> dict[str, Any]:
    from parsched.sim.api import call_core

    return call_core(_core().simulate_cosched, cfg.core_dict(), workers=workers, audit=audit,
                     boost=boost)


def simulate_cosched(
    config: CoschedConfig | Mapping[str, Any] | None = None,
    *,
    workers: int | None = None,
    audit: bool = False,
    boost: Any = None,
    **overrides: Any,
) -> CoschedResult:
    """Simulates seed 003's cluster for ``config`` (default: the core's
    defaults, PB on workload 5 on 8 nodes) with ``overrides`` applied (keyword
    arguments named like the fields, e.g. ``scheme="DCS", scale=0.05``) and
    returns a :class:`CoschedResult`.

    ``config`` may also be a mapping of field names. ``workers`` threads run
    the replications (default: one per CPU, at most ``reps``); the results do
    not depend on it. ``audit=True`` checks the machine's invariants after
    every event (slow). Raises :class:`ConfigError` (with ``field``) for a bad
    value, :class:`TimeLimitError` when the run passes ``max_time_s`` of
    simulated time (a livelock or deadlock of the configuration),
    ``KeyboardInterrupt`` promptly on Ctrl-C. Releases the GIL while it runs.

    ``boost``: your own periodic boost (schemes PB, PBT, PB-SB, PB-SY, ...) — a
    function (or an object with a ``boost`` method) called on every invocation of
    a node's boost timer with a dict of ``node``, ``now`` (ns), ``next`` (PB's
    round-robin start), ``skip_running`` and, per endpoint (the node's processes
    in order), ``pending``, ``last_arrival`` (int64) and ``running``, ``ready``,
    ``blocked``, ``done``, ``in_driver`` (bool) columns; it returns the endpoint
    to boost (a sleeping one is woken under spin-block) or None. A bad answer
    raises :class:`PolicyError` naming the node (docs/policies/cosched.md);
    ``boost`` with a scheme without a periodic boost is a :class:`ConfigError`.
    The replications then run one after another, with the GIL.
    """
    cfg = _as_config(config, overrides)
    out = _call(cfg, workers=_workers(workers, cfg.reps), audit=bool(audit), boost=boost)
    # RUN_COLUMNS, then any other per-replication number the core adds
    runs_raw = [_renamed(r) for r in out["runs"]]
    extra = [k for k, v in runs_raw[0].items()
             if k not in RUN_COLUMNS and not isinstance(v, (list, dict))]
    cols = [k for k in RUN_COLUMNS if k in runs_raw[0]] + extra
    run_rows = [{k: r[k] for k in cols} for r in runs_raw]
    jobs = [str(j) for j in out["jobs"]]
    labels = _labels(jobs)
    n = len(runs_raw)
    comm = [sum(float(r["comm_share"][j]) for r in runs_raw) / n for j in range(len(jobs))]
    first = runs_raw[0]["timeline"]
    shares = first["share"]
    tl: dict[str, Any] = {"time_s": [float(t) for t in first["time_s"]]}
    for j, label in enumerate(labels):
        tl[label] = [float(row[j]) for row in shares]

    def num(k: str) -> float:
        v = out[k]
        return math.nan if v is None else float(v)

    return CoschedResult(
        config=cfg,
        scheme=str(out["scheme"]),
        jobs=jobs,
        completion_time=num("completion_time"),
        completion_time_ci90=num("completion_time_ci90"),
        job_completion_times=[float(x) for x in out["job_completion_times"]],
        mean_job_time=num("mean_job_time"),
        cv=num("cv"),
        over_ideal=num(_CORE_OVER_IDEAL),
        ideal=num("ideal"),
        comm_share=comm,
        run_rows=run_rows,
        timeline_columns=tl,
    )


def _sweep_row(cfg: CoschedConfig, workload: int, stop: threading.Event) -> dict[str, Any]:
    if stop.is_set():  # interrupted before this one started
        raise KeyboardInterrupt
    try:
        r = simulate_cosched(cfg, workers=1)
    except TimeLimitError:
        nan = math.nan
        return {"scheme": cfg.scheme, "workload": workload, "completion_time": nan,
                "ci90": nan, "cv": nan, "over_ideal": nan, "mean_job_time": nan,
                "livelock": True}
    return {"scheme": r.scheme, "workload": workload, "completion_time": r.completion_time,
            "ci90": r.completion_time_ci90, "cv": r.cv, "over_ideal": r.over_ideal,
            "mean_job_time": r.mean_job_time, "livelock": False}


def cosched_sweep(
    base: CoschedConfig,
    schemes: Sequence[str],
    workloads: Sequence[int],
    *,
    workers: int | None = None,
) -> pd.DataFrame:
    """Runs ``base`` under every scheme of ``schemes`` on every workload (1-9,
    Table 2) of ``workloads`` (``base.jobs`` is cleared so that the workload
    applies) and returns one row per pair, schemes outer, in the given order:
    :data:`SWEEP_COLUMNS` (``ci90``: the completion time's 90% half-width, NaN
    with one replication; ``livelock``: the run passed ``max_time_s``, its
    numbers NaN). The configurations run on a thread pool of ``workers``
    threads (default: one per CPU); each carries its own seed, so the rows do
    not depend on ``workers``. All configurations are checked before any runs.
    Ctrl-C stops every run in progress (KeyboardInterrupt).
    """
    import pandas as pd

    if not isinstance(base, CoschedConfig):
        raise TypeError(f"base must be a CoschedConfig, not {type(base).__name__}")
    if isinstance(schemes, str):
        schemes = [schemes]
    tasks = [(base.with_(scheme=s, workload=w, jobs=()), w)
             for s in schemes for w in workloads]
    if not tasks:
        return pd.DataFrame(columns=list(SWEEP_COLUMNS))
    n = _workers(workers, len(tasks)) if workers is not None else \
        max(1, min(len(tasks), os.cpu_count() or 1))
    from parsched.sim.api import gather

    stop = threading.Event()
    with cf.ThreadPoolExecutor(max_workers=n, thread_name_prefix="cosched") as ex:
        futures = {ex.submit(_sweep_row, cfg, w, stop): i
                   for i, (cfg, w) in enumerate(tasks)}
        try:
            rows = gather(futures)  # cancels the runs not started on an error
        except BaseException:
            stop.set()
            _core().cancel_cosched()  # the runs in progress end within ~50 ms
            raise
    return pd.DataFrame([rows[i] for i in range(len(tasks))], columns=list(SWEEP_COLUMNS))


def _run_cosched_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`parsched.sweep` for a :class:`CoschedConfig`:
    the summary numbers of one configuration (its ``reps`` replications on one
    thread); a run that passes ``max_time_s`` gives NaNs and ``livelock`` True."""
    config = CoschedConfig.from_dict(cfg)
    keys = ("completion_time", "completion_time_ci90", "mean_job_time", "cv", "over_ideal",
            "ideal")
    try:
        out = _call(config, workers=1, audit=False)
    except TimeLimitError:
        return {**dict.fromkeys(keys, math.nan), "events": 0, "wall_seconds": math.nan,
                "livelock": True}
    out = _renamed(out)
    runs = list(out["runs"])
    summary: dict[str, Any] = {
        k: math.nan if out.get(k) is None else float(out[k]) for k in keys}
    summary["events"] = int(sum(int(r.get("events", 0)) for r in runs))
    summary["wall_seconds"] = float(sum(float(r.get("wall_seconds", 0.0)) for r in runs))
    summary["livelock"] = False
    return summary
