"""Running real programs under parsched's Linux runtime.

:func:`run_jobs` launches a set of jobs on this machine and schedules them with
the runtime controller (crates/parsched-runtime, see docs/runtime.md) until all
of them end::

    import parsched
    out = parsched.run_jobs({"policy": "gang", "slot": "50ms",
                             "jobs": [{"argv": ["./a.out"], "width": 2},
                                      {"argv": ["./b.out", "x"]}]})
    [j["success"] for j in out["jobs"]], out["controller"]["switches"]

    out = parsched.run_jobs("jobs.toml", policy="default")   # a TOML job file

The spec's keys are those of the runtime's ``RunSpec`` (policy, slot, backend,
max_slots, cpus, pools, realtime, spread, confirm_freeze, ..., jobs) plus each
policy's own table (``fcs``, ``cosched``: :func:`parsched.runtime.policies.policies`
lists them with their keys; the flat spellings ``fcs_window_s``,
``cosched_scheme``, ... are accepted too); a TOML job file holds the same keys
with ``[[jobs]]`` tables. Unknown keys raise
:class:`~parsched.ConfigError`; missing cgroup support or permissions raise
:class:`~parsched.RuntimeUnavailable`; anything else going wrong at run time
:class:`~parsched.RuntimeFailure`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

from parsched.errors import ConfigError, PolicyError, RuntimeFailure, RuntimeUnavailable, shown
from parsched.runtime.policies import choices, policy_names

__all__ = ["BACKENDS", "POLICIES", "load_job_file", "make_spec", "run_jobs", "split_commands"]

#: Every policy name (and alias) the runtime takes, from its table of policies
#: (:mod:`parsched.runtime.policies`); empty in a build without the runtime.
POLICIES = tuple(policy_names())
#: The freezer backends a spec may name (the runtime's ``backend`` key).
BACKENDS = tuple(choices(None, "backend") or ())


def load_job_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a TOML job file (top-level RunSpec keys plus ``[[jobs]]`` tables)."""
    from parsched.config.base import read_toml

    path = os.fspath(path)
    data = read_toml(path, "jobs file")
    jobs = data.get("jobs", [])
    if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
        raise ConfigError("jobs", f"{path}: 'jobs' must be [[jobs]] tables",
                          "[[jobs]] tables with argv = [...]")
    return data


def split_commands(words: Sequence[str]) -> list[list[str]]:
    """Splits ``a.out ARGS : b.out ARGS`` at lone ``:`` words (mpirun's MPMD syntax)."""
    words = list(words)
    if words and words[0] == "--":
        words = words[1:]
    out: list[list[str]] = [[]]
    for w in words:
        if w == ":":
            out.append([])
        else:
            out[-1].append(w)
    if len(out) == 1 and not out[0]:
        return []
    for i, argv in enumerate(out):
        if not argv:
            raise ConfigError("command", f"job {i} is empty (two ':' in a row, or a ':' at "
                              "an end)", "PROGRAM ARGS : PROGRAM ARGS")
    return out


def _check_program(i: int, job: Mapping[str, Any]) -> None:
    argv = job.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ConfigError("argv", f"job {i} has no program", "a program and its arguments")
    prog = argv[0]
    cwd = job.get("cwd")
    if "/" in prog:
        path = prog if os.path.isabs(prog) or not cwd else os.path.join(str(cwd), prog)
        ok = os.path.isfile(path) and os.access(path, os.X_OK)
    else:
        ok = shutil.which(prog, path=(job.get("env") or {}).get("PATH", os.environ.get("PATH")))
    if not ok:
        raise ConfigError("argv", f"job {i}: program {prog!r} not found or not executable",
                          "an executable file or a command on PATH")


def make_spec(spec: Mapping[str, Any] | str | os.PathLike[str] | None = None,
              **keys: Any) -> dict[str, Any]:
    """Builds the RunSpec dict: ``spec`` (a dict, or a TOML job file's path) with
    ``keys`` on top (None values are ignored). ``jobs`` may be given as argv
    lists or as job dicts; checks that every job's program exists."""
    if spec is None:
        out: dict[str, Any] = {}
    elif isinstance(spec, Mapping):
        out = dict(spec)
    else:
        out = load_job_file(spec)
    for k, v in keys.items():
        if v is not None:
            out[k] = v
    jobs = []
    for j in out.get("jobs", []) or []:
        if isinstance(j, Mapping):
            jobs.append(dict(j))
        elif isinstance(j, (list, tuple)):
            jobs.append({"argv": [str(a) for a in j]})
        else:
            raise ConfigError("jobs", f"{shown(j)} is not a job", "an argv list or a job table")
    if not jobs:
        raise ConfigError("jobs", "no job given", "at least one job")
    for i, j in enumerate(jobs):
        _check_program(i, j)
    out["jobs"] = jobs
    if "policy" in out and POLICIES and out["policy"] not in POLICIES:
        raise ConfigError("policy", f"unknown policy {shown(out['policy'])}", ", ".join(POLICIES))
    if "backend" in out and BACKENDS and out["backend"] not in BACKENDS:
        raise ConfigError("backend", f"unknown backend {out['backend']!r}", ", ".join(BACKENDS))
    return out


def run_jobs(spec: Mapping[str, Any] | str | os.PathLike[str] | None = None, *,
             stop_on_signal: bool = True, **keys: Any) -> dict[str, Any]:
    """Runs real jobs on this machine until all end (blocking); see the module doc.

    Ctrl-C (or SIGTERM, SIGHUP) during the run stops its jobs, and then raises
    ``KeyboardInterrupt`` — so a loop of runs stops at once — unless
    ``stop_on_signal=False``, which returns the reports (the controller's
    ``signal`` says which signal stopped it).

    Returns ``{"jobs": [report, ...], "controller": stats}``: per job name,
    argv, pid, status {code, signal}, success, wall_s, user_s, sys_s,
    suspended_s, width, slots_run, cpus, pool, coscheduled, classes (fcs: [t_s,
    class] at each change), observed, wss_bytes (regions: the last working-set
    estimate), wss_unreliable (regions: why that estimate is unreliable — a
    kernel DAMON monitor, named, cleared the accessed bits it is read from —
    or None), ranks (cosched: [MPI rank, CPU] pinned); the controller's
    switches, wakeups, switch_s, max_switch_s, spread_s, cpu_s, wall_s, realtime,
    backend, and the policy's own report beside them: dc_slots, dc_slot_s (fcs),
    boosts (cosched), ``regions`` (regions: caches, scans, scan_s, decisions: at_s,
    wss_bytes, decision, placement, loads, wss_unreliable; wss_unreliable: each
    distinct reason an estimate of the run is unreliable). Policy ``"flexible"`` is an alias
    of ``"fcs"``.
    """
    full = make_spec(spec, **keys)
    try:
        from parsched import _core as c
    except ImportError as e:  # pragma: no cover - depends on the build
        raise RuntimeUnavailable(f"the compiled extension is missing ({e})") from None
    if not hasattr(c, "run_jobs"):  # pragma: no cover
        raise RuntimeUnavailable(
            "this build of parsched has no Linux runtime (built without the `runtime` "
            "feature, or not on Linux)"
        )
    try:
        out: dict[str, Any] = c.run_jobs(full)
    except c.ConfigError as e:
        msg = str(e)
        if msg.startswith("run spec: "):
            msg = msg[len("run spec: "):]
        raise ConfigError.from_message(msg) from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except c.RuntimeUnavailable as e:
        raise RuntimeUnavailable(str(e)) from None
    except c.RuntimeFailure as e:
        raise RuntimeFailure(str(e)) from None
    if stop_on_signal and out["controller"].get("signal"):
        raise KeyboardInterrupt(f"signal {out['controller']['signal']}: the jobs were stopped")
    return out
