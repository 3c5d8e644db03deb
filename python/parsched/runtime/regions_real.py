"""Seed 004's region scheduling measured on this machine.

Three experiments with the real ``bench/memlat`` (one thread, two equal
regions, dependent random accesses within one region for ``access_time``
accesses, then the other):

* **micro-schedule cost**: ``memlat --mode migrate`` moves a thread between
  two CPUs with ``sched_setaffinity`` and waits until it runs there; the
  median and mean one-way cost over ``migrate_round_trips`` round trips,
  repeated ``reps`` times (the paper's §5.1: 15.86 us Clovertown, 6.357 us
  Westmere).
* **unification gain**: ``--mode none`` (the thread stays on one CPU; both
  regions share its caches) against ``--mode unify`` (before each visit the
  thread moves itself to the CPU whose private cache is to hold that region:
  the explicit-hint form of the page-touch trap) and, in the full run,
  ``--mode fault`` (the same placement driven by a protection fault:
  ``mprotect`` + SIGSEGV handler), over a grid of total working sets (both
  regions) and access times. Gain = none's ns per access / unify's
  (> 1: unification pays). Each cell's variants run interleaved
  (none, unify, fault, none, ...) ``reps`` times; medians are reported.
* **balancing**: two large and two small memlat processes on two CPUs, each
  CPU with its own private L2 (the machine's private caches): ``paired`` (each
  CPU runs one large and one small: what cache balancing by working set
  chooses), ``shared`` (the two large share one CPU's cache, the two small
  the other's: the paper's "two large sharing a cache"), ``default`` (no
  placement: Linux decides), and ``policy`` (``parsched run --policy
  regions``: working sets measured from /proc, balanced by the core crate's
  greedy balancer, applied through cpusets or affinity). Speedup = shared's
  time per access over paired's, per process kind.
* **fallback**: a workload where regioning cannot pay (every job's working
  set fits one cache, conditions 1-3) under ``policy=regions`` against
  ``policy=default``: the policy must leave Linux's placement, so the two
  agree within 3%.

All timings are wall-clock on a shared 2-vCPU virtual machine; other work
(compilers of other sessions) disturbs them. Every figure is a median of
interleaved repetitions, with the load average recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from parsched._io import source_root
from parsched.errors import RuntimeUnavailable

__all__ = [
    "PAPER",
    "balance_real",
    "balance_sizes",
    "build_memlat",
    "cache_info",
    "fallback_real",
    "measure",
    "memlat",
    "microschedule_cost",
    "private_cache_bytes",
    "run",
    "unification_grid",
]

#: seed 004's reported numbers (section 5.1, 5.2, Figure 9) for the report
PAPER = {
    "microschedule_us": {"clovertown": 15.86, "westmere": 6.357},
    "unification_peak_gain": {"clovertown": 1.45, "westmere": "over 300%"},
    "microschedules_per_s_winning_band": {"clovertown": (295, 2240),
                                           "westmere": (180, 5100)},
    "balancing_speedup_min": 1.5,
}

KB = 1024
MB = 1024 * 1024
FULL_WSS = (256 * KB, 512 * KB, 1 * MB, 2 * MB, 4 * MB, 16 * MB, 64 * MB)
FULL_ACCESS = tuple(2 ** k for k in (8, 10, 12, 14, 16, 18, 20))
QUICK_WSS = (512 * KB, 4 * MB)
QUICK_ACCESS = (2 ** 8, 2 ** 14)
#: the regions policy's scan period in these experiments (of each job's CPU
#: time): 32 scans (the first placement) take 0.32 s of CPU per job
SCAN = "10ms"


def build_memlat(bench_dir: str | os.PathLike[str] | None = None) -> str:
    """The path of a built ``bench/memlat`` (built with ``make`` if needed).

    Raises :class:`RuntimeUnavailable` when it cannot be built here (no C
    compiler, no bench directory)."""
    d = Path(bench_dir) if bench_dir is not None else Path(source_root()) / "bench"
    exe = d / "memlat"
    src = d / "memlat.c"
    if exe.is_file() and os.access(exe, os.X_OK) and (
            not src.exists() or exe.stat().st_mtime >= src.stat().st_mtime):
        return str(exe)
    if not src.exists():
        raise RuntimeUnavailable(f"no memlat source at {src}")
    if shutil.which("make") is None or shutil.which(os.environ.get("CC", "cc")) is None:
        raise RuntimeUnavailable("memlat needs make and a C compiler")
    r = subprocess.run(["make", "-C", str(d), "memlat"], capture_output=True, text=True)
    if r.returncode != 0 or not exe.is_file():
        raise RuntimeUnavailable(f"building memlat failed: {r.stderr.strip()[-300:]}")
    return str(exe)


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def cache_info(cpu: int = 0) -> list[dict[str, Any]]:
    """The data/unified caches of ``cpu`` from sysfs (level, size, shared CPUs)."""
    out = []
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/cache")
    for d in sorted(base.glob("index*")):
        try:
            ty = (d / "type").read_text().strip()
            if ty == "Instruction":
                continue
            out.append({"level": int((d / "level").read_text()), "type": ty,
                        "size": (d / "size").read_text().strip(),
                        "shared_cpu_list": (d / "shared_cpu_list").read_text().strip()})
        except OSError:
            continue
    return out


def private_cache_bytes(cpu: int = 0) -> int | None:
    """The size of the largest data cache private to ``cpu`` (sysfs), bytes."""
    best = None
    for c in cache_info(cpu):
        if c["shared_cpu_list"] != str(cpu):
            continue
        size = c["size"].strip().upper()
        mult = {"K": KB, "M": MB}.get(size[-1:], 1)
        try:
            n = int(size.rstrip("KM")) * mult
        except ValueError:
            continue
        best = n if best is None else max(best, n)
    return best


def balance_sizes(cpu: int = 0) -> tuple[int, ...]:
    """The large processes' region sizes of the balancing experiment: working
    sets (two regions) of 3/4 and 1 private cache of ``cpu`` (192 KB and 256 KB
    for a 512 KB L2), in whole pages."""
    c = private_cache_bytes(cpu) or 512 * KB
    return tuple(max(4 * KB, (c * f // 8) // (4 * KB) * 4 * KB) for f in (3, 4))


def memlat(exe: str, *args: str, cpus: Sequence[int] | None = None,
           timeout: float = 300.0) -> dict[str, Any]:
    """Runs memlat once (optionally confined to ``cpus``) and parses its JSON."""
    pre = None
    if cpus is not None:
        allowed = set(cpus)

        def pre() -> None:  # pragma: no cover - runs in the child
            os.sched_setaffinity(0, allowed)

    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                       preexec_fn=pre)
    if r.returncode != 0:
        raise RuntimeError(f"memlat {' '.join(args)} failed ({r.returncode}): "
                           f"{r.stderr.strip()}")
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def _two_cpus() -> tuple[int, int]:
    c = _cpus()
    if len(c) < 2:
        raise RuntimeUnavailable("region scheduling needs at least two CPUs")
    return c[0], c[1]


def microschedule_cost(exe: str, round_trips: int = 2000, reps: int = 5) -> dict[str, Any]:
    """One-way ``sched_setaffinity`` migration cost between two CPUs, us."""
    a, b = _two_cpus()
    runs = [memlat(exe, "--mode", "migrate", "--cpus", f"{a},{b}", "--rounds",
                   str(round_trips)) for _ in range(reps)]
    med = [float(r["one_way_us_median"]) for r in runs]
    mean = [float(r["one_way_us_mean"]) for r in runs]
    return {"cpus": [a, b], "round_trips": round_trips, "reps": reps,
            "one_way_us_median": statistics.median(med),
            "one_way_us_mean": statistics.median(mean),
            "one_way_us_medians": med, "one_way_us_means": mean,
            "paper_us": PAPER["microschedule_us"]}


def unification_grid(exe: str, wss: Sequence[int] = FULL_WSS,
                     access: Sequence[int] = FULL_ACCESS, reps: int = 3,
                     seconds: float = 0.3,
                     modes: Sequence[str] = ("none", "unify", "fault")) -> list[dict[str, Any]]:
    """memlat's ns per access per (total working set, access time, mode).

    ``wss`` is the total working set (both regions); each region is half.
    The variants of a cell run interleaved, ``reps`` times, each for
    ``seconds`` after one warm-up round."""
    a, b = _two_cpus()
    raw: dict[tuple[int, int, str], list[dict[str, Any]]] = {}
    for _ in range(reps):
        for w in wss:
            for acc in access:
                for m in modes:
                    r = memlat(exe, "--size", str(w // 2), "--access-time", str(acc),
                               "--seconds", f"{seconds:g}", "--mode", m, "--cpus", f"{a},{b}")
                    raw.setdefault((w, acc, m), []).append(r)
    rows = []
    for w in wss:
        for acc in access:
            row: dict[str, Any] = {"wss_bytes": w, "region_bytes": w // 2, "access_time": acc}
            for m in modes:
                rs = raw[(w, acc, m)]
                row[f"{m}_ns"] = statistics.median(float(r["ns_per_access"]) for r in rs)
                row[f"{m}_ns_all"] = [float(r["ns_per_access"]) for r in rs]
                if m != "none":
                    row[f"{m}_migrations_per_s"] = statistics.median(
                        float(r["migrations_per_s"]) for r in rs)
            for m in modes:
                if m != "none":
                    row[f"gain_{m}"] = row["none_ns"] / row[f"{m}_ns"]
            rows.append(row)
    return rows


def _memlat_job(exe: str, size: int, access: int, seconds: float, name: str,
                work: str) -> dict[str, Any]:
    return {"name": name, "width": 1,
            "argv": [exe, "--size", str(size), "--access-time", str(access), "--seconds",
                     f"{seconds:g}", "--mode", "none"],
            "stdout": os.path.join(work, f"{name}.out")}


def _read_job_out(path: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(Path(path).read_text())
    return out


def _placed(exe: str, jobs: list[tuple[str, int]], cpus_of: dict[str, list[int]] | None,
            access: int, seconds: float) -> dict[str, float]:
    """Starts the memlat jobs together (each confined to ``cpus_of[name]``, or
    free), waits, returns ns per access by name."""
    procs = []
    for name, size in jobs:
        cpus = None if cpus_of is None else cpus_of[name]
        argv = [exe, "--size", str(size), "--access-time", str(access), "--seconds",
                f"{seconds:g}", "--mode", "none"]
        pre = None
        if cpus is not None:
            allowed = set(cpus)

            def pre(allowed: set[int] = allowed) -> None:  # pragma: no cover
                os.sched_setaffinity(0, allowed)

        procs.append((name, subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                             preexec_fn=pre)))
    out = {}
    for name, p in procs:
        so, _ = p.communicate(timeout=seconds * 10 + 60)
        if p.returncode != 0:
            raise RuntimeError(f"memlat job {name} failed ({p.returncode})")
        out[name] = float(json.loads(so)["ns_per_access"])
    return out


def _run_policy(jobs: list[dict[str, Any]], policy: str,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    from parsched.runtime import run_jobs

    spec: dict[str, Any] = {"policy": policy, "jobs": jobs}
    spec.update(extra or {})
    out: dict[str, Any] = run_jobs(spec)
    bad = [j["name"] for j in out["jobs"] if not j["success"]]
    if bad:
        raise RuntimeError(f"jobs failed: {', '.join(bad)}")
    return out


def _policy_ns(exe: str, jobs: list[tuple[str, int]], access: int, seconds: float,
               policy: str, work: str, extra: dict[str, Any] | None = None
               ) -> tuple[dict[str, float], dict[str, Any]]:
    specs = [_memlat_job(exe, size, access, seconds, name, work) for name, size in jobs]
    out = _run_policy(specs, policy, extra)
    ns = {s["name"]: float(_read_job_out(s["stdout"])["ns_per_access"]) for s in specs}
    return ns, out


def balance_real(exe: str, large: int = 192 * KB, small: int = 8 * KB,
                 access: int = 2 ** 16, seconds: float = 5.0, reps: int = 3,
                 with_policy: bool = True) -> dict[str, Any]:
    """The balancing experiment on two CPUs (sizes are per region: a memlat
    process's working set is twice its region size)."""
    a, b = _two_cpus()
    jobs = [("large0", large), ("large1", large), ("small0", small), ("small1", small)]
    placements: dict[str, dict[str, list[int]] | None] = {
        "paired": {"large0": [a], "small0": [a], "large1": [b], "small1": [b]},
        "shared": {"large0": [a], "large1": [a], "small0": [b], "small1": [b]},
        "default": None,
    }
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in placements}
    policy_runs: list[dict[str, Any]] = []
    if with_policy:
        runs["policy"] = []
    loads = []
    with tempfile.TemporaryDirectory(prefix="parsched-regions-") as work:
        for _ in range(reps):
            loads.append(float(os.getloadavg()[0]))
            for k, cpus_of in placements.items():
                runs[k].append(_placed(exe, jobs, cpus_of, access, seconds))
            if with_policy:
                ns, out = _policy_ns(exe, jobs, access, seconds, "regions", work,
                                     {"regions": {"cache_level": 2, "scan": SCAN}})
                runs["policy"].append(ns)
                policy_runs.append({"jobs": [{"name": j["name"], "cpus": j.get("cpus"),
                                              "wss_bytes": j.get("wss_bytes")}
                                             for j in out["jobs"]],
                                    "regions": out["controller"].get("regions")})

    def med(k: str, kind: str) -> float:
        return statistics.median(statistics.mean(r[n] for n in r if n.startswith(kind))
                                 for r in runs[k])

    res: dict[str, Any] = {"large_region_bytes": large, "small_region_bytes": small,
                           "access_time": access, "seconds": seconds, "reps": reps,
                           "load_before": loads, "cpus": [a, b]}
    for k in runs:
        res[k] = {"large_ns": med(k, "large"), "small_ns": med(k, "small"),
                  "all": runs[k]}
    res["speedup_large"] = res["shared"]["large_ns"] / res["paired"]["large_ns"]
    res["speedup_small"] = res["shared"]["small_ns"] / res["paired"]["small_ns"]
    if with_policy:
        res["policy_placements"] = policy_runs
        res["policy_vs_shared_large"] = res["shared"]["large_ns"] / res["policy"]["large_ns"]
    res["paper_speedup_min"] = PAPER["balancing_speedup_min"]
    return res


#: the fallback variants: where regioning cannot pay on this machine
FALLBACK_VARIANTS: dict[str, dict[str, Any]] = {
    # the default level (the last: one L3 shared by every CPU here): one cache,
    # decided at the start (no groups, no scans)
    "last_level": {},
    # the private L2s, with jobs that together fit one of them (condition 2):
    # scanned every 10 ms of CPU (the decision comes within the run) ...
    "l2_fits_one_cache": {"regions": {"cache_level": 2, "scan": SCAN}},
    # ... and with the default 100 ms scans
    "l2_default_scan": {"regions": {"cache_level": 2}},
}


def fallback_real(exe: str, size: int = 16 * KB, access: int = 2 ** 12, jobs: int = 4,
                  seconds: float = 4.0, reps: int = 7,
                  variants: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """``policy=regions`` against ``policy=default`` where regioning cannot pay,
    interleaved (default, each variant, default, ...): the jobs' total accesses
    per second (higher is better) and each variant's ratio to default."""
    variants = FALLBACK_VARIANTS if variants is None else variants
    specs = [(f"j{k}", size) for k in range(jobs)]
    rates: dict[str, list[float]] = {"default": [], **{v: [] for v in variants}}
    decisions: dict[str, list[Any]] = {v: [] for v in variants}
    loads = []
    with tempfile.TemporaryDirectory(prefix="parsched-regions-") as work:
        for _ in range(reps):
            loads.append(float(os.getloadavg()[0]))
            for name, extra in (("default", None), *variants.items()):
                pol = "default" if name == "default" else "regions"
                ns, out = _policy_ns(exe, specs, access, seconds, pol, work, extra)
                rates[name].append(sum(1e9 / v for v in ns.values()))
                if name != "default":
                    decisions[name].append(sorted({d["decision"] for d in
                                                   out["controller"]["regions"]["decisions"]}))
    d = statistics.median(rates["default"])
    res: dict[str, Any] = {"region_bytes": size, "access_time": access, "jobs": jobs,
                           "seconds": seconds, "reps": reps, "load_before": loads,
                           "default_accesses_per_s": d, "all": rates, "decisions": decisions}
    for v in variants:
        r = statistics.median(rates[v])
        res[v] = {"accesses_per_s": r, "ratio": r / d, "within_3pct": abs(r / d - 1) <= 0.03}
    return res


def measure(quick: bool = False, bench_dir: str | os.PathLike[str] | None = None,
            with_policy: bool = True,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Everything above; ``quick`` shrinks the grids and the repetitions (a
    smoke run of about a minute; the full run takes about 8 minutes).

    Returns a dict: ``caches`` (sysfs, CPU 0), ``load_before``,
    ``microschedule`` (:func:`microschedule_cost`), ``unification`` (rows of
    :func:`unification_grid`), ``balancing`` (a list of
    :func:`balance_real` results: large regions of :func:`balance_sizes`, i.e.
    working sets of 3/4 and 1 private cache (192 KB and 256 KB for a 512 KB
    L2); quick: the first only), ``fallback``
    (:func:`fallback_real`; with ``with_policy``), ``elapsed_s``."""
    if not hasattr(os, "sched_setaffinity"):
        raise RuntimeUnavailable("region scheduling on a real machine needs Linux")
    say = progress or (lambda _m: None)
    exe = build_memlat(bench_dir)
    if len(_cpus()) < 2:
        raise RuntimeUnavailable("region scheduling needs at least two CPUs")
    t0 = time.perf_counter()
    res: dict[str, Any] = {"quick": quick, "caches": cache_info(_cpus()[0]),
                           "load_before": list(os.getloadavg())}
    say("regions_real: micro-schedule cost")
    res["microschedule"] = microschedule_cost(exe, 500 if quick else 2000, 3 if quick else 5)
    if quick:
        res["unification"] = unification_grid(exe, QUICK_WSS, QUICK_ACCESS, reps=1,
                                              seconds=0.1, modes=("none", "unify"))
        res["balancing"] = [balance_real(exe, large=balance_sizes(_cpus()[0])[0], seconds=1.0,
                                         reps=1, with_policy=with_policy)]
        if with_policy:
            res["fallback"] = fallback_real(exe, seconds=0.5, reps=1)
    else:
        say("regions_real: unification grid (about 5 minutes)")
        res["unification"] = unification_grid(exe)
        say("regions_real: balancing")
        res["balancing"] = [balance_real(exe, large=large, with_policy=with_policy)
                            for large in balance_sizes(_cpus()[0])]
        if with_policy:
            say("regions_real: fallback against default")
            res["fallback"] = fallback_real(exe)
    res["elapsed_s"] = time.perf_counter() - t0
    return res


def _policy_available() -> bool:
    try:
        from parsched import _core
    except ImportError:
        return False
    return hasattr(_core, "run_jobs") and os.geteuid() == 0


def run(out_dir: str | os.PathLike[str], quick: bool = False,
        progress: Callable[[str], None] | None = None) -> str:
    """:func:`measure` for ``parsched reproduce regions --real``: writes
    ``real.json`` (everything), ``real_unification.csv``,
    ``real_balancing.csv`` and ``real_fallback.csv`` to ``out_dir`` and
    returns a one-paragraph summary. The policy runs (``parsched run --policy
    regions``) need the compiled runtime and root; without them only memlat's
    measurements run."""
    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = measure(quick=quick, with_policy=_policy_available(), progress=progress)
    (out / "real.json").write_text(json.dumps(res, indent=1))
    uni = pd.DataFrame([{k: v for k, v in r.items() if not k.endswith("_all")}
                        for r in res["unification"]])
    uni.to_csv(out / "real_unification.csv", index=False)
    bal = pd.DataFrame([{"large_region_bytes": b["large_region_bytes"],
                         "small_region_bytes": b["small_region_bytes"],
                         **{f"{k}_{kind}_ns": b[k][f"{kind}_ns"]
                            for k in ("paired", "shared", "default", "policy") if k in b
                            for kind in ("large", "small")},
                         "speedup_large": b["speedup_large"],
                         "speedup_small": b["speedup_small"]} for b in res["balancing"]])
    bal.to_csv(out / "real_balancing.csv", index=False)
    parts = [f"micro-schedule {res['microschedule']['one_way_us_median']:.1f} us median, "
             f"{res['microschedule']['one_way_us_mean']:.1f} us mean (one way)",
             f"unification gain {uni['gain_unify'].min():.2f}-{uni['gain_unify'].max():.2f} "
             f"over the grid",
             "balancing speedup (paired over shared, large) "
             + ", ".join(f"{b['speedup_large']:.2f}" for b in res["balancing"])]
    if "fallback" in res:
        fb = res["fallback"]
        rows = [{"variant": v, **fb[v]} for v in fb if isinstance(fb[v], dict) and "ratio" in fb[v]]
        pd.DataFrame(rows).to_csv(out / "real_fallback.csv", index=False)
        parts.append("fallback/default " + ", ".join(f"{r['variant']} {r['ratio']:.3f}"
                                                     for r in rows))
    return (f"this machine (load {res['load_before'][0]:.1f}): " + "; ".join(parts)
            + f" (real.json, {res['elapsed_s']:.0f} s)")


if __name__ == "__main__":  # pragma: no cover - manual runs
    import sys

    q = "--quick" in sys.argv
    pol = "--no-policy" not in sys.argv
    print(json.dumps(measure(quick=q, with_policy=pol), indent=1))
