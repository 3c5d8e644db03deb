"""Seed 002's Table 1 (load-imbalanced workload) measured on this machine.

Seed 002 (section 4.2) runs three 4-process jobs on 4 processors, iterating
compute + an all-process synchronization at 1 ms granularity: job 1 with its
processes 3-4 computing twice as long, job 2 with processes 1-2, job 3
balanced; alone, jobs 1-2 take 120 s and job 3 60 s. Here the same workload is
sized to this machine:

* P = the processors this process may use (2 here); each job is one
  ``bench/bsp`` with P threads, gang width P; job 1 = ``--mult`` 1 for its
  first half of workers and 2 for the second half, job 2 the reverse, job 3
  all 1 (with P odd, the "first half" is the first P // 2 workers);
* grain 1 ms (the seed's); ``iters = solo_s / 1 ms``, so job 3 alone takes
  about ``solo_s`` and jobs 1-2 about 2 x ``solo_s``; the compute rate is
  calibrated once (``--loops-per-us``), so every scheme does the same work;
* optimum = total compute demand / P = iters x grain x (sum of all workers'
  multipliers) / P (4 x ``solo_s`` for P = 2; the seed's 240 s);
* schemes (the barrier's waiting in brackets):

  - ``default``: all started at once, Linux schedules (``policy=default``)
    [block: a futex barrier that sleeps at once, what a pthread barrier or an
    MPI that yields does; the seed's "Default" is unmodified Linux with the
    MPI's own waiting, NS];
  - ``sb``: as default, with spin-block waiting (spin 50 us, then block:
    implicit coscheduling's waiting, the seed's SB) [spinblock];
  - ``fcfs``: the jobs one after the other, each alone (``policy=default``)
    [block]; job k's time is its finish time in the sequence;
  - ``gang``: ``policy=gang``, 50 ms slots [spin: coscheduled jobs spin, as
    under the seed's GS];
  - ``fcs``: ``policy=fcs``, 50 ms slots, ``fcs_discovery_fill`` (jobs in
    discovery fill each other's slots at SCHED_IDLE) [adaptive: the runtime
    publishes each job's class to it (``PARSCHED_FCS_CLASS_FILE``) and bsp
    waits by class, as the FCS papers' communication library does: CS
    spin-blocks (50 us), everything else blocks, so once coscheduled the CS
    job no longer pays a wake-up per barrier; bsp also publishes its
    synchronization count and spin time (``PARSCHED_FCS_SYNC_FILE``), from
    which the classifier sees the paper's classes (jobs 1-2 F, job 3 CS)
    whatever the waiting hides from /proc]; the classes it assigned over
    time are reported per job.

Each scheme runs ``reps`` times (repetition-major: every scheme once, then
again, so a drift in foreign load does not favour one); the run with the
median makespan is reported, with every makespan and the 1-minute load average before each run
(the machine is shared: foreign load slows spinning jobs most).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parsched.errors import ConfigError, RuntimeUnavailable

__all__ = ["SCHEMES", "WAITING", "job_multipliers", "table1_real"]

SCHEMES = ("default", "sb", "fcfs", "gang", "fcs")
#: the barrier's waiting under each scheme (see the module doc)
WAITING = {"default": "block", "sb": "spinblock", "fcfs": "block", "gang": "spin",
           "fcs": "adaptive"}
#: RunSpec keys of a scheme beyond its policy
SPEC = {"fcs": {"fcs_discovery_fill": True}}
POLICY = {"default": "default", "sb": "default", "fcfs": "default", "gang": "gang",
          "fcs": "fcs"}
SLOT = "50ms"
GRAIN_US = 1000.0
#: seed 002, Table 1 (s): jobs 1-3 and makespan
PAPER = {"default": (233, 233, 284, 284), "fcfs": (120, 240, 300, 300),
         "gang": (303, 303, 181, 303), "sb": (210, 211, 271, 271),
         "fcs": (248, 248, 151, 248)}
PAPER_OPTIMUM_S = 240.0


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover
        return os.cpu_count() or 1


def job_multipliers(p: int) -> list[list[float]]:
    """The three jobs' per-worker compute multipliers on ``p`` processors."""
    half = p // 2
    return [[1.0] * half + [2.0] * (p - half),
            [2.0] * half + [1.0] * (p - half),
            [1.0] * p]


def _check_runtime() -> None:
    from parsched.runtime.bsp import check_runtime

    try:
        check_runtime()
    except RuntimeUnavailable as e:
        raise RuntimeUnavailable(f"the real Table 1 cannot run here: {e}") from None


def _argv(bsp: str, p: int, iters: int, mult: Sequence[float], wait: str, lpu: float) -> list[str]:
    return [bsp, "--threads", str(p), "--iters", str(iters), "--grain-us", f"{GRAIN_US:g}",
            "--wait", wait, "--mult", ",".join(f"{m:g}" for m in mult),
            "--loops-per-us", f"{lpu:.3f}"]


def _run(jobs: list[dict[str, Any]], policy: str,
         extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    from parsched.runtime import run_jobs

    out = run_jobs({"policy": policy, "slot": SLOT, "jobs": jobs, **dict(extra or {})})
    bad = [j["name"] for j in out["jobs"] if not j["success"]]
    if bad:
        raise RuntimeError(f"jobs failed: {', '.join(bad)}")
    if policy in ("gang", "fcs") and out["controller"]["backend"] == "signal":
        raise RuntimeUnavailable("the real Table 1 needs a cgroup freezer; only signals are "
                                 "usable here")
    return out


def _once(scheme: str, bsp: str, p: int, iters: int, lpu: float, work: str,
          wait: str) -> dict[str, Any]:
    jobs = [{"name": f"job{k + 1}", "argv": _argv(bsp, p, iters, m, wait, lpu), "width": p,
             "stdout": os.path.join(work, f"{scheme}.job{k + 1}.out")}
            for k, m in enumerate(job_multipliers(p))]
    load = float(os.getloadavg()[0])
    t0 = time.perf_counter()
    classes: list[list[list[Any]]] = []
    switches = dc_slots = 0
    if scheme == "fcfs":
        times, end = [], 0.0
        for j in jobs:
            out = _run([j], "default")
            end += float(out["jobs"][0]["wall_s"])
            times.append(end)
    else:
        out = _run(jobs, POLICY[scheme], SPEC.get(scheme))
        times = [float(j["wall_s"]) for j in out["jobs"]]
        switches = int(out["controller"]["switches"])
        dc_slots = int(out["controller"].get("dc_slots", 0))
        if scheme == "fcs":
            classes = [[[float(t), str(c)] for t, c in j.get("classes", [])]
                       for j in out["jobs"]]
    cpu = [_bsp_cpu_s(j["stdout"]) for j in jobs]
    busy = sum(cpu) if all(c is not None for c in cpu) else None
    return {"job_s": times, "makespan_s": max(times), "load_before": load,
            "total_s": time.perf_counter() - t0, "switches": switches, "dc_slots": dc_slots,
            "classes": classes, "cpu_s": busy,
            "utilization": None if busy is None else busy / (p * max(times))}


def _bsp_cpu_s(path: str) -> float | None:
    """The CPU seconds a bsp job reported (its JSON line), or None."""
    try:
        with open(path) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        return float(json.loads(lines[-1])["cpu_s"])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def table1_real(bsp_path: str, schemes: Sequence[str] = ("default", "gang", "fcs"),
                solo_s: float | None = None, reps: int | None = None, quick: bool = False,
                progress: Callable[[str], None] | None = None,
                waiting: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Runs seed 002's Table 1 workload on this machine under each scheme.

    Returns one dict per scheme (in the order given): ``scheme``, ``policy``,
    ``waiting``, ``job1_s``, ``job2_s``, ``job3_s``, ``makespan_s`` (of the
    run with the median makespan), ``optimum_s`` (total demand / P),
    ``vs_optimum`` (makespan / optimum - 1), ``load_before`` (1-minute load
    average before that run), ``makespans`` (every run's), ``reps``, ``procs``,
    ``iters``, ``solo_s``, ``switches``, ``dc_slots`` and, for ``fcs``,
    ``classes``: per job the list of ``[t_s, class]`` it went through; ``cpu_s``
    (the CPU seconds the three bsp jobs reported in that run) and
    ``utilization`` (``cpu_s`` / (P x makespan): the share of the machine the
    jobs used; with blocking waits that is their work, so a scheme at
    utilization u leaves at most 1 - u of its makespan for any other schedule
    to save). Defaults:
    ``solo_s`` 5 (``quick``: 0.5), ``reps`` 3 (``quick``: 1). ``waiting``
    overrides a scheme's barrier waiting (``{"fcs": "block"}``; default
    :data:`WAITING`). Raises
    :class:`~parsched.RuntimeUnavailable` where the runtime cannot freeze jobs.
    """
    from parsched.runtime.bsp import calibrate

    for s in schemes:
        if s not in SCHEMES:
            raise ConfigError("scheme", f"unknown scheme {s!r}", ", ".join(SCHEMES))
    waits = {**WAITING, **dict(waiting or {})}
    for s, w in waits.items():
        if s not in SCHEMES or w not in ("spin", "block", "spinblock", "adaptive"):
            raise ConfigError("waiting", f"{s!r}: {w!r}",
                              "a scheme mapped to spin, block, spinblock or adaptive")
    solo = float(solo_s if solo_s is not None else (0.5 if quick else 5.0))
    n = int(reps if reps is not None else (1 if quick else 3))
    if not solo > 0:
        raise ConfigError("solo_s", f"{solo_s!r}", "a number of seconds > 0")
    if n < 1:
        raise ConfigError("reps", f"{reps!r}", "an integer >= 1")
    if not (os.path.isfile(bsp_path) and os.access(bsp_path, os.X_OK)):
        raise ConfigError("bsp", f"{bsp_path!r} is not an executable file",
                          "the path of a built bench/bsp")
    _check_runtime()
    p = max(1, _cpus())
    iters = max(1, round(solo * 1e6 / GRAIN_US))
    demand = sum(sum(m) for m in job_multipliers(p)) * iters * GRAIN_US / 1e6
    optimum = demand / p
    lpu = calibrate(bsp_path)
    say = progress or (lambda _msg: None)
    import tempfile

    rows = []
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in schemes}
    with tempfile.TemporaryDirectory(prefix="parsched-table1-") as work:
        # Repetition-major order: foreign load drifts, and drift should not
        # favour the scheme that happened to run first.
        for r in range(n):
            for scheme in schemes:
                say(f"table 1 ({p} CPUs, solo {solo:g} s): {scheme}, run {r + 1}/{n}")
                results[scheme].append(_once(scheme, bsp_path, p, iters, lpu, work,
                                             waits[scheme]))
        for scheme in schemes:
            runs = results[scheme]
            spans = [x["makespan_s"] for x in runs]
            med = sorted(runs, key=lambda x: x["makespan_s"])[(len(runs) - 1) // 2]
            row: dict[str, Any] = {
                "scheme": scheme, "policy": POLICY[scheme], "waiting": waits[scheme],
                "job1_s": med["job_s"][0], "job2_s": med["job_s"][1], "job3_s": med["job_s"][2],
                "makespan_s": med["makespan_s"], "optimum_s": optimum,
                "vs_optimum": med["makespan_s"] / optimum - 1.0,
                "load_before": med["load_before"], "makespans": spans,
                "median_makespan_s": statistics.median(spans), "reps": n, "procs": p,
                "iters": iters, "solo_s": solo, "switches": med["switches"],
                "dc_slots": med["dc_slots"], "cpu_s": med["cpu_s"],
                "utilization": med["utilization"]}
            if scheme == "fcs":
                row["classes"] = med["classes"]
            rows.append(row)
    return rows
