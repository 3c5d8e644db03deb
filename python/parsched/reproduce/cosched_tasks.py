"""Seed 003's simulation tasks, shared by the reproduction
(:mod:`.cosched`) and the spin-time procedure (:mod:`.cosched_tune`): one
configuration a task, run in a process pool longest first; and the paper's
Tables 3-4, which order them."""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any

__all__ = ["PAPER", "run_one", "simulate_tasks"]

#: Tables 3 and 4: completion time (s) of W1..W9.
PAPER: dict[str, tuple[int, ...]] = {
    "Local": (180, 208, 674, 2524, 3997, 106, 1115, 1088, 3393),
    "SB": (124, 153, 773, 1814, 2849, 104, 438, 301, 1344),
    "DCS": (162, 192, 350, 533, 764, 104, 214, 144, 664),
    "DCS-SB": (133, 173, 321, 463, 700, 101, 221, 134, 525),
    "PB": (130, 138, 152, 226, 451, 103, 174, 176, 355),
    "PBT": (152, 190, 252, 295, 284, 112, 125, 136, 211),
    "PB-SB": (130, 158, 655, 1685, 2660, 106, 411, 331, 1467),
    "SY": (157, 185, 985, 2320, 3046, 107, 936, 818, 2674),
    "DCS-SY": (166, 205, 347, 527, 717, 105, 183, 145, 618),
    "PB-SY": (141, 158, 287, 459, 733, 103, 171, 145, 836),
}


def run_one(task: dict[str, Any]) -> dict[str, Any]:
    """One configuration (a process-pool task): summary numbers, or the
    livelock that stopped it."""
    from parsched.config import CoschedConfig
    from parsched.errors import TimeLimitError
    from parsched.sim.cosched import simulate_cosched

    cfg = CoschedConfig(**task["config"])
    try:
        r = simulate_cosched(cfg, workers=1)
    except TimeLimitError as e:
        return {"livelock": True, "error": str(e)}
    out: dict[str, Any] = {
        "livelock": False,
        "completion_time": r.completion_time,
        "ci90": r.completion_time_ci90,
        "job_completion_times": list(r.job_completion_times),
        "cv": r.cv,
        "mean_job_time": r.mean_job_time,
        "comm_share": list(r.comm_share),
        "latency_us": float(r.runs["small_latency_us"].mean()),
        "wall_seconds": float(r.runs["wall_seconds"].sum()),
        "events": int(r.runs["events"].sum()),
    }
    if task.get("timeline"):
        out["timeline"] = r.timeline.to_dict(orient="list")
    return out


def simulate_tasks(tasks: list[dict[str, Any]], executor: cf.Executor | None,
              progress: bool) -> list[dict[str, Any]]:
    from parsched.sim.api import executor_for, gather, process_executor

    # longest first, so that the pool ends together
    order = sorted(range(len(tasks)), key=lambda i: -_cost(tasks[i]))
    with executor_for(executor, len(tasks), default=process_executor) as ex:
        futures = {ex.submit(run_one, tasks[i]): i for i in order}
        results = gather(futures, progress=progress)
    return [results[i] for i in range(len(tasks)) if results.get(i) is not None]


def _cost(task: dict[str, Any]) -> float:
    """A rough guess of a task's run time, for ordering only."""
    s, w = task["scheme"], task["workload"]
    paper = PAPER.get(s, (100,) * 9)[w - 1]
    return paper * task["scale"] * task["config"].get("reps", 1)
