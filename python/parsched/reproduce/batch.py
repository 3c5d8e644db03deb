"""Every workload trace under FCFS, EASY, conservative backfilling and gang scheduling.

``parsched reproduce batch`` runs each ``*.swf`` / ``*.swf.gz`` file of the
shared traces directory (``<repo>/../shared/traces`` by default) under the four
policies with the default configuration (machine size from the header, default
loading rules; gang: mpl 4, quantum 60 s) and writes ``batch.csv`` and
``batch.md`` (jobs, procs, average wait, average bounded slowdown, utilization,
makespan, wall time, and what loading dropped or repaired). It then runs one
trace twice and checks that the two schedules are identical (determinism), and
draws that trace's schedule under EASY and gang (``gantt_<policy>.png``,
``utilization_<policy>.png``, shown in ``batch.md``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parsched._io import source_root
from parsched.config import BatchConfig
from parsched.errors import ConfigError

__all__ = ["POLICIES", "default_traces_dir", "find_traces", "run"]

POLICIES = ("fcfs", "easy", "conservative", "gang")

#: Columns of batch.csv.
COLUMNS = (
    "trace", "procs", "records", "jobs", "policy", "avg_wait", "avg_bsld", "utilization",
    "makespan", "max_queue", "wall_seconds", "total_seconds", "load_report",
)


def default_traces_dir() -> str:
    """``<repo>/../shared/traces``, the repository root found from this package
    (``python/parsched`` in a checkout), else from the working directory; else
    (an installed package, no checkout) the logs that come with parsched
    (:mod:`parsched.datasets`)."""
    candidates = [Path(source_root()) / ".." / "shared" / "traces"]
    cwd = Path.cwd().resolve()
    candidates += [p / ".." / "shared" / "traces" for p in (cwd, *cwd.parents)
                   if (p / ".git").exists() or (p / "pyproject.toml").exists()]
    for c in candidates:
        if c.is_dir():
            return os.path.normpath(str(c))
    from parsched.datasets import directory

    return directory()


def find_traces(directory: str) -> list[str]:
    """The SWF traces in ``directory`` (``.swf`` and ``.swf.gz``), sorted by name."""
    if not os.path.isdir(directory):
        raise ConfigError("--traces", f"{directory!r} is not a directory",
                          "a directory holding .swf or .swf.gz files")
    names = sorted(n for n in os.listdir(directory)
                   if n.endswith((".swf", ".swf.gz")) and not n.startswith("."))
    if not names:
        raise ConfigError("--traces", f"no .swf or .swf.gz file in {directory!r}",
                          "a directory holding .swf or .swf.gz files")
    return [os.path.join(directory, n) for n in names]


def trace_name(path: str) -> str:
    name = os.path.basename(path)
    for ext in (".gz", ".swf"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


def _report_text(report: dict[str, int]) -> str:
    if not report:
        return "as is"
    return "; ".join(f"{n} {reason}" for reason, n in report.items())


def run(out_dir: str, traces_dir: str, *, policies: tuple[str, ...] = POLICIES,
        echo: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """Runs every trace under every policy; writes batch.csv and batch.md to
    ``out_dir``; returns ``{"rows": [...], "deterministic": bool, ...}``."""
    import time

    import pandas as pd

    from parsched.sim.batch import simulate_batch

    traces = find_traces(traces_dir)
    rows = []
    for path in traces:
        for policy in policies:
            t0 = time.perf_counter()
            r = simulate_batch(path, BatchConfig(policy=policy))
            total = time.perf_counter() - t0
            s = r.summary
            rows.append({
                "trace": trace_name(path), "procs": int(s["procs"]), "records": r.records,
                "jobs": int(s["jobs"]), "policy": policy, "avg_wait": float(s["avg_wait"]),
                "avg_bsld": float(s["avg_bounded_slowdown"]),
                "utilization": float(s["utilization"]), "makespan": int(s["makespan"]),
                "max_queue": int(s["max_queue"]), "wall_seconds": float(s["wall_seconds"]),
                "total_seconds": total, "load_report": _report_text(r.report),
            })
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    # determinism: the smallest trace, EASY, twice
    smallest = min(traces, key=os.path.getsize)
    runs = [simulate_batch(smallest, BatchConfig(policy="easy")) for _ in range(2)]
    same = runs[0].jobs.equals(runs[1].jobs) and runs[0].queue.equals(runs[1].queue) and (
        {k: v for k, v in runs[0].summary.items() if k != "wall_seconds"}
        == {k: v for k, v in runs[1].summary.items() if k != "wall_seconds"})
    df.to_csv(os.path.join(out_dir, "batch.csv"), index=False)
    md = results_markdown(df)
    note = (f"\nDeterminism: {trace_name(smallest)} under EASY run twice: "
            f"{'identical jobs, queue and summary' if same else 'DIFFERENT'}.\n")
    plots = write_plots(out_dir, smallest, runs[0],
                        [p for p in PLOT_POLICIES if p in policies and p != "easy"])
    with open(os.path.join(out_dir, "batch.md"), "w") as fh:
        fh.write("# Batch scheduling on the shared traces\n\n" + md + note + plots)
    if echo is not None:
        echo("batch scheduling on the shared traces",
             df[["trace", "procs", "jobs", "policy", "avg_wait", "avg_bsld", "utilization",
                 "makespan", "wall_seconds"]])
        for name, text in dict(zip(df["trace"], df["load_report"], strict=True)).items():
            echo(f"loading {name}", text)
        echo("determinism", f"{trace_name(smallest)} twice: {'identical' if same else 'DIFFERENT'}")
    return {"rows": rows, "deterministic": same, "determinism_trace": trace_name(smallest),
            "traces": [trace_name(t) for t in traces]}


#: The policies whose schedules ``reproduce batch`` draws (on the smallest trace).
PLOT_POLICIES = ("easy", "gang")
#: Jobs in the Gantt charts' default window.
PLOT_JOBS = 300


def write_plots(out_dir: str, trace: str, easy, others: list[str]) -> str:
    """Gantt chart and utilization plot of ``trace`` under EASY (``easy``, a
    result already at hand) and each policy of ``others``; the Markdown that
    shows them."""
    from parsched.sim.batch import simulate_batch

    name = trace_name(trace)
    md = [f"\n## Schedules of {name} (the smallest trace)\n"]
    results = [("easy", easy)] + [(p, simulate_batch(trace, BatchConfig(policy=p)))
                                  for p in others]
    for policy, r in results:
        gantt, util = f"gantt_{policy}.png", f"utilization_{policy}.png"
        r.plot_gantt(os.path.join(out_dir, gantt), max_jobs=PLOT_JOBS)
        r.plot_utilization(os.path.join(out_dir, util))
        md += [f"### {name} under {policy}: Gantt chart (first {PLOT_JOBS} jobs)\n",
               f"![{name} {policy} Gantt]({gantt})\n",
               f"### {name} under {policy}: processors in use and queue\n",
               f"![{name} {policy} utilization]({util})\n"]
    return "\n".join(md)


def results_markdown(df) -> str:
    """The README's table: one row per trace and policy; load reports below it."""
    head = ("| trace | P | jobs | policy | avg wait (s) | avg bsld | util | makespan (s) "
            "| wall ms |\n|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in df.itertuples(index=False):
        lines.append(
            f"| {r.trace} | {r.procs} | {r.jobs} | {r.policy} | {r.avg_wait:.0f} | "
            f"{r.avg_bsld:.2f} | {r.utilization:.4f} | {r.makespan} | "
            f"{r.wall_seconds * 1e3:.1f} |")
    loads = []
    seen = set()
    for r in df.itertuples(index=False):
        if r.trace in seen:
            continue
        seen.add(r.trace)
        loads.append(f"* {r.trace}: {r.records} records, {r.jobs} run; {r.load_report}")
    return head + "\n".join(lines) + "\n\nLoading (default rules):\n\n" + "\n".join(loads) + "\n"
