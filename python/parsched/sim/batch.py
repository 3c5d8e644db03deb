"""Batch space-sharing and gang scheduling of rigid jobs on workload traces.

:func:`simulate_batch` runs one SWF trace (``.swf`` or ``.swf.gz``) under FCFS,
EASY or conservative backfilling, or gang scheduling (:class:`BatchConfig`) in
the Rust core and returns a :class:`BatchResult`: the summary, the per-job
schedule as a DataFrame whose columns follow Batsim's ``_jobs.csv`` (so evalys
users can plot it), the queue length over time, what loading dropped or
repaired (``report``) and the trace header; it draws a Gantt chart and a
utilization plot as PNG.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parsched.config import BatchConfig
from parsched.config.table import summary_keys
from parsched.display import pyplot, save_figure
from parsched.errors import ConfigError, PolicyError, SimulationError, TraceError
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "BATCH_SUMMARY_KEYS",
    "JOBS_CSV_COLUMNS",
    "BatchResult",
    "parse_intervals",
    "simulate_batch",
]

#: Batsim's ``_jobs.csv`` columns, in its order (the CSV written by ``jobs_csv``
#: / ``--jobs-out`` has exactly these; :attr:`BatchResult.jobs` has them too,
#: followed by ``bounded_slowdown``).
JOBS_CSV_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time",
    "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
    "consumed_energy", "metadata",
)

#: Keys of :attr:`BatchResult.summary` (times in seconds).
BATCH_SUMMARY_KEYS = summary_keys("batch")


def _core():
    from parsched.sim.api import core

    return core()


def check_trace(path: str | os.PathLike[str] | None) -> str:
    """The trace path as a string (a bundled log's name, ``kth-sp2``, names
    its file: :mod:`parsched.datasets`); a :class:`TraceError` if it cannot be
    opened."""
    from parsched.datasets import resolve

    if path is None:
        raise ConfigError("trace", "no trace given",
                          "--trace FILE.swf[.gz] (or a bundled log: parsched datasets) or "
                          "BatchConfig.trace")
    path = resolve(path)
    if os.path.isdir(path):
        raise TraceError(path, "is a directory")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        from parsched.datasets import names

        hint = "" if os.sep in path else f" (bundled logs: {', '.join(names())})"
        raise TraceError(path, f"cannot open: {e.strerror or e}{hint}") from None
    return path


def _source(cfg: BatchConfig, trace: str | os.PathLike[str] | None = None) -> str | None:
    """The checked trace path, or None for a generated workload (a
    :class:`ConfigError` when a file is given with ``workload="lublin"``)."""
    if cfg.workload == "lublin":
        if trace is not None or cfg.trace is not None:
            raise ConfigError("trace", "a trace file is given with workload=lublin",
                              "a trace with workload=trace, or no trace with workload=lublin")
        return None
    return check_trace(trace if trace is not None else cfg.trace)


def _call(path: str | None, cfg: BatchConfig, jobs_csv: str | None = None,
          swf_out: str | None = None, priority: Any = None,
          hooks: dict[str, Any] | None = None, on_violation: str = "strict",
          fallback: str | None = None, gang_place: Any = None) -> dict:
    c = _core()
    path_label = path if path is not None else "generated workload"
    h = dict(hooks or {})
    if priority is not None:
        h.setdefault("priority", priority)
    try:
        return c.simulate_batch(path, cfg.core_dict(), jobs_csv, swf_out, h.get("priority"),
                                h.get("select"), h.get("on_submit"), h.get("on_complete"),
                                on_violation, fallback, gang_place)
    except c.TraceError as e:
        raise TraceError(path_label, str(e)) from None
    except c.ConfigError as e:
        err = ConfigError.from_message(str(e))
        if err.field not in (*BatchConfig.field_names(), "priority", "on_violation",
                             "fallback", "gang_place"):
            # the machine refused the job list (e.g. a job wider than the
            # machine under too_wide=error): a property of the trace
            raise TraceError(path_label, str(e)) from None
        raise err from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except getattr(c, "SimulationError", ()) as e:
        raise SimulationError(str(e)) from None


def simulate_batch(
    trace: str | os.PathLike[str] | BatchConfig | None = None,
    config: BatchConfig | None = None,
    *,
    jobs_csv: str | os.PathLike[str] | None = None,
    swf_out: str | os.PathLike[str] | None = None,
    priority: Any = None,
    policy: Any = None,
    on_violation: str = "strict",
    fallback: str | None = None,
    gang_place: Any = None,
) -> BatchResult:
    """Runs an SWF trace under ``config`` (default: EASY, machine size from the
    header) and returns a :class:`BatchResult`.

    ``priority``: your own queue order, a function called once per scheduling
    pass with the queue as numpy columns — a dict of ``now``, ``free`` and, per
    queued job in arrival order, ``submit``, ``wait``, ``requested``,
    ``procs``, ``user``, ``group``, ``queue``, ``partition`` (int64) and
    ``fits_now`` (bool) — returning one score per job, lowest first (ties keep
    arrival order); fcfs, easy or conservative then starts, reserves and
    backfills in that order. A wrong number of scores, a NaN or an exception
    raises :class:`PolicyError` naming the job or the error
    (docs/policies/batch-orders.md). ``lambda q: q["submit"]`` is EASY itself.

    ``policy``: a built-in name (``"fcfs"``, ``"easy"``, ``"conservative"``,
    ``"gang"``: the same as ``config.policy``) or your own policy object with
    ``priority`` or ``select`` and optionally ``on_submit`` / ``on_complete``
    (:mod:`parsched.sim.batch_policy`, docs/policies/batch-python.md). A bad
    ``select`` decision raises :class:`PolicyError` naming the job and what
    was wrong, or with ``on_violation="repair"`` is dropped and listed in
    :attr:`BatchResult.violations`; with ``fallback="easy"`` (or another
    built-in) a pass whose hook raised is the built-in's.

    ``gang_place``: your own slot rule for ``policy="gang"`` — a function (or
    an object with a ``place`` method) called once per admission attempt of a
    job that fits somewhere, with a dict of ``now``, the job's ``id``,
    ``procs``, ``requested``, ``submit``, per existing slot ``slot_free`` and
    ``slot_jobs`` (int64 arrays), ``mpl`` and ``slots``; it returns a slot
    index (an existing slot with room, or ``slots`` for a new slot while fewer
    than ``mpl`` exist) or None (not now). A bad answer raises
    :class:`PolicyError` naming the job (docs/policies/gang-scheduler.md);
    ``gang_place`` with another policy is a :class:`ConfigError`.

    ``trace`` is the file (``.swf`` or ``.swf.gz``); it may be left out when
    ``config.trace`` is set or ``config.workload`` is ``"lublin"`` (a
    generated workload, no file), and a :class:`BatchConfig` may be given as
    the first argument. ``jobs_csv`` / ``swf_out`` also write the schedule as
    Batsim's jobs CSV / an SWF trace; they are written to temporary files and
    renamed only if the run succeeds. Raises :class:`TraceError` for a bad
    trace (the message names the line), :class:`ConfigError` for a bad key.
    Deterministic: the same trace and config give the same schedule.
    """
    from parsched._io import atomic_file
    from parsched.sim.batch_policy import hooks as policy_hooks

    if isinstance(trace, BatchConfig) and config is None:
        trace, config = None, trace
    config = BatchConfig() if config is None else config
    if not isinstance(config, BatchConfig):
        raise TypeError(f"config must be a BatchConfig, not {type(config).__name__}")
    hooks: dict[str, Any] = {}
    if isinstance(policy, str):
        config = config.with_(policy=policy)
    elif policy is not None:
        hooks = policy_hooks(policy)
        if priority is not None and "priority" in hooks:
            raise ConfigError("priority", "given with a policy that has priority",
                              "one of them")
    path = _source(config, trace)
    if config.trace != path:
        config = config.with_(trace=path)
    outs = [os.fspath(p) if p is not None else None for p in (jobs_csv, swf_out)]
    import contextlib

    with contextlib.ExitStack() as stack:
        tmps = [stack.enter_context(atomic_file(p)) if p else None for p in outs]
        out = _call(path, config, tmps[0], tmps[1], priority, hooks, on_violation, fallback,
                    gang_place)
    return _result(config, out)


def _str_column(n: int, data: bytes, offsets: Any) -> Any:
    """A pandas ``str`` column (Arrow storage) from UTF-8 text and int64
    offsets, without a Python object per row."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(np.ascontiguousarray(offsets)),
                                           pa.py_buffer(data)).cast(pa.string())
    return pd.array(arr, dtype=pd.StringDtype("pyarrow", na_value=np.nan))


def _repeat_str(n: int, values: tuple[str, ...], index: Any) -> Any:
    """``values[index[i]]`` for every row as a pandas ``str`` column."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    arr = pa.array(list(values), type=pa.string()).take(pa.array(index))
    return pd.array(arr, dtype=pd.StringDtype("pyarrow", na_value=np.nan))


def _result(config: BatchConfig, out: dict) -> BatchResult:
    """The result; its DataFrames are built from the extension's raw columns
    on first use (so a caller that reads only the summary, such as
    ``simulate batch --json``, never imports pandas)."""
    return BatchResult(
        config=config, policy=str(out["policy"]), summary=dict(out["summary"]),
        report=dict(out.get("report") or {}), header=dict(out.get("header") or {}),
        raw={"columns": out["columns"], "queue": out["queue"],
             "violations": out.get("violations") or []},
    )


def _jobs_frame(cols: dict[str, Any]) -> pd.DataFrame:
    """The per-job DataFrame from raw columns (arrays of bytes; one NumPy
    array per column, no Python object per job)."""
    import numpy as np
    import pandas as pd

    def i64(name: str) -> Any:
        return np.frombuffer(cols[name], dtype=np.int64)

    killed = np.frombuffer(cols["killed"], dtype=np.uint8)
    n = len(killed)
    k = killed.astype(np.int8)
    offsets = np.frombuffer(cols["resources_offsets"], dtype=np.int64)
    data: dict[str, Any] = {}
    for c in JOBS_CSV_COLUMNS:
        if c == "workload_name":
            data[c] = _repeat_str(n, ("w0",), np.zeros(n, dtype=np.int8))
        elif c == "profile":
            data[c] = _repeat_str(n, ("delay", "delay_killed"), k)
        elif c == "success":
            data[c] = (1 - k).astype(np.int64)
        elif c == "final_state":
            data[c] = _repeat_str(n, ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"), k)
        elif c == "consumed_energy":
            data[c] = np.full(n, -1.0)
        elif c == "metadata":
            data[c] = _repeat_str(n, ("",), np.zeros(n, dtype=np.int8))
        elif c == "allocated_resources":
            data[c] = _str_column(n, cols["resources_data"], offsets)
        elif c == "stretch":
            data[c] = np.frombuffer(cols[c], dtype=np.float64)
        else:
            data[c] = i64(c)
    data["bounded_slowdown"] = np.frombuffer(cols["bounded_slowdown"], dtype=np.float64)
    # (the arrays view the extension's writable buffers: no copy)
    return pd.DataFrame(data, copy=False)


def _queue_frame(q: dict[str, Any]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    return pd.DataFrame({"time": np.frombuffer(q["time"], dtype=np.int64),
                         "length": np.frombuffer(q["length"], dtype=np.int64)}, copy=False)


def _run_batch_summary(cfg: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point of :func:`parsched.sweep` for a :class:`BatchConfig`."""
    config = BatchConfig.from_dict(cfg)
    out = _call(_source(config), config)
    summary = dict(out["summary"])
    summary["dropped"] = sum(n for k, n in out.get("report", {}).items()
                             if k.startswith("dropped"))
    return summary


_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_intervals(text: str) -> list[tuple[int, int]]:
    """Batsim interval set (``"0-3 8 10-11"``) as inclusive ``(first, last)`` pairs."""
    out = []
    for part in str(text or "").split():
        m = _INTERVAL.match(part)
        if not m:
            raise ValueError(f"bad interval {part!r} in {text!r}")
        a = int(m.group(1))
        out.append((a, int(m.group(2)) if m.group(2) else a))
    return out


#: Above this many steps a utilization panel shows means over bins, not every step.
MAX_STEPS = 2000


def binned_mean(times: Any, values: Any, end: float, bins: int = 400) -> tuple[Any, Any]:
    """The time-weighted mean of a step function (``values[k]`` from
    ``times[k]`` to the next time, the last one to ``end``) over ``bins``
    equal bins from ``times[0]`` to ``end``: (bin starts, means). Exact: the
    area is piecewise linear between steps."""
    import numpy as np

    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    end = max(float(end), float(t[-1]))
    te = np.append(t, end)
    area = np.concatenate([[0.0], np.cumsum(v * np.diff(te))])
    edges = np.linspace(t[0], end, bins + 1)
    a = np.interp(edges, te, area)
    width = np.diff(edges)
    return edges[:-1], np.divide(np.diff(a), width, out=np.zeros(bins), where=width > 0)


def _time_unit(span: float) -> tuple[float, str]:
    if span > 3 * 86400:
        return 86400.0, "days"
    if span > 3 * 3600:
        return 3600.0, "hours"
    return 1.0, "seconds"


@dataclass(frozen=True, repr=False)
class BatchResult(SimResult):
    """The outcome of one :func:`simulate_batch` call (times in seconds).

    * ``summary``: :data:`BATCH_SUMMARY_KEYS` — ``jobs`` run, ``procs``,
      ``avg_wait``, ``max_wait``, ``avg_response``, ``avg_slowdown``,
      ``avg_bounded_slowdown`` (τ = ``bsld_tau``), ``utilization`` (Σ procs·run /
      (P·makespan)), ``makespan`` (last end − first submit), ``killed``,
      ``max_queue``, ``avg_queue`` (time-weighted), ``slot_switches`` (gang),
      ``wall_seconds`` (the simulation alone);
    * ``jobs``: one row per job run, Batsim's ``_jobs.csv`` columns
      (:data:`JOBS_CSV_COLUMNS`) plus ``bounded_slowdown``;
    * ``queue``: ``time``, ``length`` at every change of the queue length;
    * ``report``: what loading dropped or repaired, ``{reason: count}`` (only
      non-zero counts; empty when the trace was used as is);
    * ``header``: the parsed SWF header (``max_procs``, ``max_nodes``,
      ``unix_start_time``, ..., ``fields``: every ``Key: value``, ``notes``).
    """

    _HEADLINE = ("policy", "jobs", "avg_wait", "avg_bounded_slowdown", "utilization",
                 "makespan")
    FRAMES = ("jobs", "queue")

    config: BatchConfig
    policy: str
    summary: dict[str, Any]
    report: dict[str, int]
    header: dict[str, Any] = field(repr=False)
    #: the extension's raw columns, turned into :attr:`jobs` / :attr:`queue` on first use
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job run: Batsim's ``_jobs.csv`` columns plus ``bounded_slowdown``."""
        cached = self.__dict__.get("_jobs")
        if cached is None:
            cached = _jobs_frame(self.raw["columns"])
            object.__setattr__(self, "_jobs", cached)
        return cached

    @property
    def queue(self) -> pd.DataFrame:
        """``time``, ``length`` at every change of the queue length."""
        cached = self.__dict__.get("_queue")
        if cached is None:
            cached = _queue_frame(self.raw["queue"])
            object.__setattr__(self, "_queue", cached)
        return cached

    @property
    def violations(self) -> pd.DataFrame:
        """A ``select`` policy's bad decisions dropped under
        ``on_violation="repair"`` (and hooks that raised under a
        ``fallback``): ``time``, ``job_id``, ``kind``, ``message`` (empty
        otherwise)."""
        import pandas as pd

        rows = self.raw.get("violations") or []
        return pd.DataFrame(rows, columns=["time", "job_id", "kind", "message"])

    @property
    def slots(self) -> Any:
        """Per job (the rows of :attr:`jobs`): the gang matrix slot it ran in (0
        under space sharing), as int64; None from an extension that does not
        report it."""
        cols = self.raw["columns"]
        if "slot" not in cols:
            return None
        import numpy as np

        return np.frombuffer(cols["slot"], dtype=np.int64)

    @property
    def dropped(self) -> int:
        """Records dropped while loading (every reason)."""
        return sum(n for k, n in self.report.items() if k.startswith("dropped"))

    @property
    def records(self) -> int:
        """Job records read from the trace (kept + dropped)."""
        return int(self.summary["jobs"]) + self.dropped

    def _extra_dict(self) -> dict[str, Any]:
        h = self.header
        return {"trace": self.config.trace, "policy": self.policy, "records": self.records,
                "dropped": self.dropped, "report": dict(self.report),
                "header": {k: h.get(k) for k in ("max_procs", "max_nodes", "unix_start_time",
                                                 "computer", "installation", "version")}}

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame: the config fields followed by the summary."""
        import pandas as pd

        row = dict(self.config.to_dict())
        for k, v in self.summary.items():
            row[k if k not in row else f"measured_{k}"] = v
        row["dropped"] = self.dropped
        return pd.DataFrame([row])

    # ------------------------------------------------------------ plots
    def busy(self) -> pd.DataFrame:
        """Processors in use over time, from the jobs: ``time``, ``busy`` (the value
        from that time on). Under gang scheduling this is the processors held by the
        jobs resident in the matrix, every slot added up (up to mpl × procs; see
        :meth:`busy_by_slot` for one column per slot)."""
        import numpy as np
        import pandas as pd

        j = self.jobs
        w = j["requested_number_of_resources"].to_numpy(dtype=np.int64)
        t = np.concatenate([j["starting_time"].to_numpy(), j["finish_time"].to_numpy()])
        d = np.concatenate([w, -w])
        if len(t) == 0:
            return pd.DataFrame({"time": [], "busy": []})
        order = np.lexsort((d, t))  # at one time, releases before starts
        t, d = t[order], d[order]
        level = np.cumsum(d)
        last = np.r_[t[1:] != t[:-1], True]
        return pd.DataFrame({"time": t[last], "busy": level[last]})

    def slot_lanes(self) -> Any:
        """Per job (the rows of :attr:`jobs`), the gang matrix slot it ran in
        (the core's slot index, 0..mpl−1; a job keeps its slot and columns from
        admission to its end); all zeros under space sharing. Jobs of one slot
        never share a processor at the same time."""
        import numpy as np

        n = len(self.jobs)
        if self.slots is not None and len(self.slots) == n:
            return np.asarray(self.slots, dtype=np.int64)
        if self.policy == "gang" and n:
            raise SimulationError("this build of parsched._core does not report gang slots; "
                                  "rebuild it (make develop)")
        return np.zeros(n, dtype=np.int64)

    def busy_by_slot(self) -> pd.DataFrame:
        """Processors held per gang slot over time: ``time`` and one column per
        slot (``slot 0``, ``slot 1``, ...: the value from that time on; each at
        most ``procs``), then ``active`` (slots holding jobs) and ``in_use``
        (Σ slots / active: the processors in use averaged over a rotation, when
        the active slots share the machine in turn). Space sharing: one slot."""
        import numpy as np
        import pandas as pd

        j = self.jobs
        lanes = self.slot_lanes()
        k = int(lanes.max()) + 1 if len(lanes) else 1
        w = j["requested_number_of_resources"].to_numpy(dtype=np.int64)
        t = np.concatenate([j["starting_time"].to_numpy(), j["finish_time"].to_numpy()])
        if len(t) == 0:
            return pd.DataFrame({"time": [], "slot 0": [], "active": [], "in_use": []})
        d = np.concatenate([w, -w])
        ln = np.concatenate([lanes, lanes])
        order = np.lexsort((d, t))
        t, d, ln = t[order], d[order], ln[order]
        levels = np.zeros((len(t), k), dtype=np.int64)
        levels[np.arange(len(t)), ln] = d
        levels = np.cumsum(levels, axis=0)
        last = np.r_[t[1:] != t[:-1], True]
        levels = levels[last]
        out = pd.DataFrame({"time": t[last]})
        for s in range(k):
            out[f"slot {s}"] = levels[:, s]
        active = (levels > 0).sum(axis=1)
        out["active"] = active
        out["in_use"] = levels.sum(axis=1) / np.maximum(active, 1)
        return out

    def plot_utilization(self, path: str | os.PathLike[str], *, title: str | None = None) -> str:
        """Writes two panels: processors in use over time (from the jobs' start and
        finish times; a dashed line at the machine size) and the queue length over
        time. Under gang scheduling the processors held by each slot are drawn
        apart (each at most P) with, thick, the processors in use averaged over a
        rotation (Σ slots / active slots), so the curve never passes P. The format
        follows the extension (.png, .svg, .pdf). Returns the path. Written
        atomically."""
        path = os.fspath(path)
        plt = pyplot()
        procs = int(self.summary["procs"])
        t0 = float(self.summary.get("first_submit", 0))
        span = float(self.summary.get("makespan", 0)) or 1.0
        unit, uname = _time_unit(span)
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(12 if self.policy == "gang" else 10, 6),
                                     sharex=True,
                                     gridspec_kw={"height_ratios": [3, 2]})
        try:
            u = self.summary.get("utilization", 0.0)
            if self.policy == "gang":
                by = self.busy_by_slot()
                x = (by["time"] - t0) / unit
                slots = [c for c in by.columns if c.startswith("slot ")]
                cmap = plt.get_cmap("tab10")
                for s, c in enumerate(slots):
                    a1.step(x, by[c], where="post", lw=0.5, alpha=0.7, color=cmap(s % 10),
                            label=f"held by {c}")
                a1.step(x, by["in_use"], where="post", lw=1.2, color="black",
                        label="in use:\nΣ slots / active slots")
                a1.set_ylabel("processors")
                default_title = (f"{self._label()}: utilization {u:.3f} (the slots run in "
                                 "turn, each holds at most P)")
            else:
                busy = self.busy()
                end = t0 + span
                if len(busy) > MAX_STEPS:  # 330 days of steps are a solid block
                    x, m = binned_mean(busy["time"], busy["busy"], end)
                    a1.step((x - t0) / unit, m, where="post", lw=0.8, color="tab:blue",
                            label=f"in use: mean per {span / 400 / unit:.3g} {uname}")
                elif len(busy):
                    a1.step((busy["time"] - t0) / unit, busy["busy"], where="post", lw=0.6,
                            color="tab:blue", label="in use")
                a1.set_ylabel("processors in use")
                default_title = f"{self._label()}: utilization {u:.3f}"
            a1.axhline(procs, color="black", ls="--", lw=0.8, label=f"P = {procs}")
            a1.set_ylim(0, procs * 1.08)
            a1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
            a1.set_title(title or default_title, fontsize=10)
            q = self.queue
            if len(q) > MAX_STEPS:
                x, m = binned_mean(q["time"], q["length"], t0 + span)
                a2.step((x - t0) / unit, m, where="post", lw=0.8, color="tab:red")
                a2.set_ylabel(f"queued jobs\n(mean per {span / 400 / unit:.3g} {uname})")
            elif len(q):
                a2.step((q["time"] - t0) / unit, q["length"], where="post",
                        lw=0.6, color="tab:red")
                a2.set_ylabel("queued jobs")
            else:
                a2.set_xlabel(f"time since first submit ({uname})")
            _save_png(fig, path)
        finally:
            plt.close(fig)
        return path

    def _gantt_window(self, start: Any, end: Any, window: tuple[float, float] | None,
                      max_jobs: int) -> tuple[float, float, Any]:
        """The Gantt chart's window in trace time and the jobs running in it;
        ``window`` counts from the first submission."""
        import numpy as np

        if window is None:
            if len(start) <= max_jobs:
                lo, hi = (start.min(), end.max()) if len(start) else (0.0, 1.0)
            else:
                s = np.sort(start)
                lo, hi = s[0], s[max_jobs - 1]
                if hi <= lo:
                    hi = lo + 1
        else:
            w0, w1 = float(window[0]), float(window[1])
            if not w1 > w0:
                raise ConfigError("window", f"({w0}, {w1}) is empty", "(t0, t1) with t1 > t0")
            origin = float(self.summary.get("first_submit", 0))
            lo, hi = origin + w0, origin + w1
        sel = np.flatnonzero((end >= lo) & (start <= hi))
        if window is not None and len(sel) == 0:
            span = float(self.summary.get("makespan", 0))
            raise ConfigError(
                "window", f"[{window[0]:g}, {window[1]:g}] s holds no job",
                f"a window within [0, {span:.0f}] s (seconds since the first submission; "
                "the run's makespan)")
        return float(lo), float(hi), sel

    def plot_gantt(
        self,
        path: str | os.PathLike[str],
        *,
        window: tuple[float, float] | None = None,
        max_jobs: int = 2000,
        title: str | None = None,
    ) -> str:
        """Writes a Gantt chart: one rectangle per job and allocated processor
        interval over [starting_time, finish_time] (x: time, y: processor).

        Large traces are shown through a time window: ``window=(t0, t1)`` (seconds
        since the first submission, the chart's own axis) shows the jobs running in
        it, clipped to it (a window holding no job is a :class:`ConfigError` giving
        the run's span); by default all jobs
        are drawn when there are at most ``max_jobs``, and otherwise the window runs
        from the first start to the start of the ``max_jobs``-th job (by start time),
        so about ``max_jobs`` jobs are drawn; the window is in the title. Without
        processor intervals (``track_resources=false``) each job is drawn as a bar
        of its width stacked in start order. Under gang scheduling each slot of the
        matrix gets its own lane (P processors high, its own colour, a legend;
        :meth:`slot_lanes`), since the slots share the processors in turn. The
        format follows the extension (.png, .svg, .pdf). Returns the path; written
        atomically.
        """
        import numpy as np
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch

        path = os.fspath(path)
        if max_jobs < 1:
            raise ConfigError("max_jobs", f"{max_jobs} is out of range", "integer >= 1")
        j = self.jobs
        start = j["starting_time"].to_numpy(dtype=float)
        end = j["finish_time"].to_numpy(dtype=float)
        lo, hi, sel = self._gantt_window(start, end, window, max_jobs)
        origin = float(self.summary.get("first_submit", 0))
        clipped = window is not None or len(j) > max_jobs
        unit, uname = _time_unit(hi - lo)
        procs = int(self.summary["procs"])
        gang = self.policy == "gang"
        lanes = self.slot_lanes() if gang else np.zeros(len(j), dtype=np.int64)
        nlanes = int(lanes.max()) + 1 if gang and len(lanes) else 1  # the slots the run used
        plt = pyplot()
        cmap = plt.get_cmap("tab20")
        lane_maps = [plt.get_cmap(m) for m in ("Blues", "Oranges", "Greens", "Purples",
                                               "Reds", "Greys")]
        res = j["allocated_resources"].to_numpy()
        width = j["requested_number_of_resources"].to_numpy()
        ids = j["job_id"].to_numpy()
        verts, colors = [], []
        stack = 0
        for i in sel:
            a, b = max(start[i], lo), min(end[i], hi)
            if b <= a:
                b = a + (hi - lo) * 1e-4  # zero-length jobs as a hairline
            x0, x1 = (a - origin) / unit, (b - origin) / unit
            ivs = parse_intervals(res[i]) if isinstance(res[i], str) and res[i] else []
            if not ivs:  # no processor ids: stack by start order
                ivs = [(stack % procs, stack % procs + int(width[i]) - 1)]
                stack += int(width[i])
            lane = int(lanes[i])
            if gang:
                shade = 0.35 + 0.5 * ((int(ids[i]) * 7919) % 97) / 97
                color = lane_maps[lane % len(lane_maps)](shade)
            else:
                color = cmap(int(ids[i]) % 20)
            base = (nlanes - 1 - lane) * procs  # slot 0 on top
            for p, q in ivs:
                verts.append([(x0, base + p), (x1, base + p), (x1, base + q + 1),
                              (x0, base + q + 1)])
                colors.append(color)
        fig, ax = plt.subplots(figsize=(12, 6 if nlanes == 1 else min(4 + 2.2 * nlanes, 14)))
        try:
            ax.add_collection(PolyCollection(verts, facecolors=colors, edgecolors="black",
                                             linewidths=0.2, alpha=0.9))
            ax.set_xlim((lo - origin) / unit, (hi - origin) / unit)
            ax.set_ylim(0, procs * nlanes)
            ax.set_xlabel(f"time since the first submission ({uname})")
            what = f"{len(sel)} of {len(j)} jobs"
            if clipped:
                what += f", window [{lo - origin:.0f}, {hi - origin:.0f}] s"
            if gang:
                for k in range(1, nlanes):
                    ax.axhline(k * procs, color="black", lw=1.0)
                for k in sorted(set(range(nlanes)) - {int(x) for x in lanes[sel]}):
                    ax.text((lo + hi) / 2 / unit - origin / unit,
                            (nlanes - 1 - k) * procs + procs / 2,
                            f"slot {k}: no job in this window", ha="center", va="center",
                            color="grey", fontsize=9)
                ticks = [(nlanes - 1 - k) * procs + procs / 2 for k in range(nlanes)]
                ax.set_yticks(ticks)
                ax.set_yticklabels([f"slot {k}\n(0-{procs - 1})" for k in range(nlanes)])
                ax.set_ylabel("processor, one lane per gang slot")
                handles = [Patch(color=lane_maps[k % len(lane_maps)](0.6), label=f"slot {k}")
                           for k in range(nlanes)]
                ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                          fontsize=8, title="matrix slot")
                what += f"; {nlanes} slots sharing the {procs} processors in turn"
            else:
                ax.set_ylabel("processor")
            ax.set_title(title or f"{self._label()}: {what}", fontsize=10)
            _save_png(fig, path)
        finally:
            plt.close(fig)
        return path

    def _label(self) -> str:
        name = os.path.basename(self.config.trace or "trace")
        return f"{name}, {self.policy}, P = {self.summary['procs']}"


def _save_png(fig, path) -> None:
    """Lays ``fig`` out and writes it to ``path`` atomically, in the format its
    extension names (.png, .svg, .pdf; :func:`parsched.display.save_figure`)."""
    save_figure(fig, path, dpi=110)
