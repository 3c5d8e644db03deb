"""Seed 003's design space on this Linux machine, with real MPI programs
(``parsched reproduce cosched --real``).

Mixes of two-rank MPICH jobs (``target/mpi/mpich/mpi_bsp``: CPU work between
barriers, each rank loading libparsched_mpi) of different communication
intensities — ``lo`` (a barrier every 10 ms), ``hi`` (every 0.5 ms), the same
work per job — run under plain Linux with busy-polling ranks (``default``),
gang scheduling, FCS, and the ``cosched`` policy's schemes (Local, SB, SY, PB,
PBT, PB-SB, PB-SY; ranks pinned one per CPU, the machine made a network of
workstations), interleaved, ``reps`` times. The output says which of the
paper's findings hold here and how the schemes compare with gang scheduling
(docs/runtime.md, "MPI programs"). Needs root, cgroups, MPICH and ``make mpi``.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import time
from collections.abc import Callable
from typing import Any

#: (name, RunSpec keys, the library's waiting strategy for the job or None for the scheme's)
CONFIGS: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("default (busy)", {"policy": "default"}, "busy"),
    ("gang (busy)", {"policy": "gang", "slot": "50ms"}, "busy"),
    ("fcs (busy)", {"policy": "fcs", "slot": "50ms"}, "busy"),
    ("Local", {"policy": "cosched", "cosched_scheme": "Local"}, None),
    ("SB", {"policy": "cosched", "cosched_scheme": "SB"}, None),
    ("SY", {"policy": "cosched", "cosched_scheme": "SY"}, None),
    ("DCS", {"policy": "cosched", "cosched_scheme": "DCS"}, None),
    ("DCS-SB", {"policy": "cosched", "cosched_scheme": "DCS-SB"}, None),
    ("DCS-SY", {"policy": "cosched", "cosched_scheme": "DCS-SY"}, None),
    ("PB", {"policy": "cosched", "cosched_scheme": "PB"}, None),
    ("PBT", {"policy": "cosched", "cosched_scheme": "PBT"}, None),
    ("PB-SB", {"policy": "cosched", "cosched_scheme": "PB-SB"}, None),
    ("PB-SY", {"policy": "cosched", "cosched_scheme": "PB-SY"}, None),
)
IMPLICIT = ("Local", "SB", "SY", "DCS", "DCS-SB", "DCS-SY", "PB", "PBT", "PB-SB", "PB-SY")
#: Barrier interval (µs) of each communication intensity.
GRAIN_US = {"lo": 10_000, "hi": 500}
MIXES = {"lo+lo": ("lo", "lo"), "lo+hi": ("lo", "hi"), "hi+hi": ("hi", "hi")}


def missing() -> str | None:
    """Why the real reproduction cannot run here (None: it can)."""
    from parsched.runtime import mpi

    if os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"):
        return "needs root and cgroups (the runtime's freezer and pinning)"
    if shutil.which("mpirun.mpich") is None:
        return "needs MPICH (`make mpi` installs it as root on Debian)"
    try:
        mpi.library("mpich")
    except FileNotFoundError as e:
        return str(e)
    if not os.path.exists(os.path.join(mpi.build_dir("mpich"), "mpi_bsp")):
        return "target/mpi/mpich/mpi_bsp is not built: run `make mpi`"
    return None


def mpi_bsp_job(iters: int, grain_us: int, wait: str | None, *, mults: str | None = None,
                name: str | None = None) -> dict[str, Any]:
    """A job (``run_jobs`` spec) of two MPICH ranks of ``mpi_bsp`` with the
    library: ``iters`` barriers, ``grain_us`` of CPU work before each (times
    each rank's multiplier), waiting as ``wait`` says (None: as the policy
    says)."""
    from parsched.runtime import mpi

    env = ["-env", "LD_PRELOAD", mpi.library("mpich")]
    if wait:
        env += ["-env", "PARSCHED_MPI_WAIT", wait]
    prog = os.path.join(mpi.build_dir("mpich"), "mpi_bsp")
    argv = ["mpirun.mpich", "-np", "2", *env, prog, str(iters), str(grain_us)]
    job: dict[str, Any] = {"argv": argv + ([mults] if mults else []), "width": 2}
    if name:
        job["name"] = name
    return job


def _job(kind: str, work_s: float, wait: str | None) -> dict[str, Any]:
    grain = GRAIN_US[kind]
    return mpi_bsp_job(max(1, round(work_s * 1e6 / grain)), grain, wait, name=kind)


def measure(*, quick: bool, progress: Callable[[dict[str, Any]], None] | None = None,
            configs=CONFIGS, mixes=MIXES) -> list[dict[str, Any]]:
    """One row per (rep, mix, configuration): the makespan (s), NaN if a job failed."""
    import parsched

    work_s, reps = (0.4, 1) if quick else (1.5, 3)
    rows = []
    for rep in range(reps):
        for mix, kinds in mixes.items():
            for name, spec, wait in configs:
                t0 = time.monotonic()
                out = parsched.run_jobs({**spec, "jobs": [_job(k, work_s, wait) for k in kinds]})
                wall = time.monotonic() - t0
                ok = all(j["success"] for j in out["jobs"])
                rows.append({"rep": rep, "mix": mix, "config": name,
                             "makespan_s": wall if ok else math.nan,
                             "boosts": out["controller"].get("boosts", 0)})
                if progress:
                    progress(rows[-1])
    return rows


#: The model's reading of this machine for the predictions (stated, not fitted):
#: two nodes of one CPU (a rank per CPU), a CFS-like local scheduler, shared-memory
#: message costs (this machine's ping-pong: 0.2-0.4 us a round trip), the
#: library's default spin.
MODEL = {"nodes": 2, "cpus_per_node": 1, "local": "fair", "latency_us": 2.0,
         "send_overhead_us": 0.5, "recv_overhead_us": 0.5, "spin_time_us": 100.0,
         "seed": 1}
#: The simulator's scheme for each real configuration (None: no counterpart).
SIM_SCHEME = {"gang (busy)": "gang", **{s: s for s in IMPLICIT}}


def predict(*, quick: bool, mixes=MIXES) -> dict[str, dict[str, float]]:
    """The simulator's completion time (s) for each mix and configuration that
    has a counterpart (the same jobs as ``bsp_jobs``)."""
    from parsched import _core

    work_s, reps = (0.4, 1) if quick else (1.5, 3)
    out: dict[str, dict[str, float]] = {}
    for mix, kinds in mixes.items():
        bsp = ";".join(f"{k}{i}:{GRAIN_US[k]}:{max(1, round(work_s * 1e6 / GRAIN_US[k]))}:1/1"
                       for i, k in enumerate(kinds))
        for config, scheme in SIM_SCHEME.items():
            r = _core.simulate_cosched({**MODEL, "bsp_jobs": bsp, "scheme": scheme,
                                        "reps": reps})
            out.setdefault(mix, {})[config] = float(r["completion_time"])
    return out


def medians(rows) -> dict[str, dict[str, float]]:
    """mix → configuration → median makespan (s)."""
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r["mix"], {}).setdefault(r["config"], [])
        out[r["mix"]][r["config"]].append(r["makespan_s"])
    return {m: {c: statistics.median(xs) for c, xs in cs.items()} for m, cs in out.items()}


def findings(med: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The issue's measured criteria and the paper's claims that can be checked here."""
    out = []

    def add(fid: str, claim: str, holds: bool, evidence: str) -> None:
        out.append({"id": fid, "claim": claim, "holds": bool(holds), "evidence": evidence})

    hi = med.get("hi+hi", {})
    if hi:
        g, d = hi["gang (busy)"], hi["default (busy)"]
        add("gang-vs-linux", "gang at least 1.4x faster than plain Linux with busy polling "
            "(hi+hi)", d >= 1.4 * g, f"default {d:.2f} s, gang {g:.2f} s ({d / g:.2f}x)")
    for mix, m in med.items():
        g = m["gang (busy)"]
        best = min(IMPLICIT, key=lambda s: m[s])
        add(f"implicit-near-gang-{mix}", f"the best implicit scheme within 15% of gang ({mix})",
            m[best] <= 1.15 * g, f"{best} {m[best]:.2f} s, gang {g:.2f} s")
        better = min(m["default (busy)"], g)
        add(f"fcs-{mix}", f"fcs no slower than 1.05x the better of default and gang ({mix})",
            m["fcs (busy)"] <= 1.05 * better, f"fcs {m['fcs (busy)']:.2f} s, "
            f"better {better:.2f} s")
    if hi:
        pb, others = hi["PB"], {s: hi[s] for s in IMPLICIT if s != "PB"}
        add("paper-pb-best", "paper: PB outperforms the other implicit schemes (hi+hi, "
            "within 5%)", pb <= 1.05 * min(others.values()),
            ", ".join(f"{s} {v:.2f}" for s, v in sorted(hi.items()) if s in IMPLICIT))
        add("paper-local-worst", "paper: Local is the worst implicit scheme as communication "
            "grows (hi+hi, within 5%)", hi["Local"] >= 0.95 * max(hi[s] for s in IMPLICIT),
            f"Local {hi['Local']:.2f} s, worst {max(hi[s] for s in IMPLICIT):.2f} s")
        add("paper-sb-slow", "paper: spin-block far slower than PB at high communication "
            "(SB >= 1.5x PB, hi+hi)", hi["SB"] >= 1.5 * pb,
            f"SB {hi['SB']:.2f} s, PB {pb:.2f} s")
    return out


def run(out: str, *, quick: bool, echo=None, progress: bool = True) -> dict[str, Any]:
    """Measures, writes real.csv and real.md to ``out``; returns the headlines."""
    import pandas as pd

    from parsched.report.common import markdown_table

    why = missing()
    if why:
        from parsched.errors import RuntimeUnavailable

        raise RuntimeUnavailable(f"reproduce cosched --real: {why}")

    def show(r: dict[str, Any]) -> None:
        if progress:
            print(f"real: rep {r['rep'] + 1} {r['mix']:6s} {r['config']:15s} "
                  f"{r['makespan_s']:6.2f} s", flush=True)

    rows = measure(quick=quick, progress=show)
    med = medians(rows)
    model = predict(quick=quick)
    found = findings(med)
    pd.DataFrame(rows).to_csv(os.path.join(out, "real.csv"), index=False)

    def cell(m: str, c: str) -> float:
        v = model.get(m, {}).get(c)
        return round(v, 2) if v is not None else math.nan

    table = pd.DataFrame([{"configuration": c, **{f"{m} (s)": round(med[m][c], 2)
                                                  for m in med},
                           **{f"{m} / gang": round(med[m][c] / med[m]["gang (busy)"], 2)
                              for m in med},
                           **{f"{m} model (s)": cell(m, c) for m in med}}
                          for c, _, _ in CONFIGS])
    md = "\n".join([
        "## On this machine: real MPI jobs (`--real`)", "",
        "Two-rank MPICH jobs, a barrier every 10 ms (lo) or 0.5 ms (hi), the same work per "
        "job; median makespan over the repetitions (real.csv). 'model': the simulator's "
        "prediction for the same jobs (`bsp_jobs`) on two one-CPU nodes with a CFS-like "
        "local scheduler and shared-memory message costs (2 us, 0.5 us overheads), the "
        "library's 100 us spin (cosched_real.MODEL; stated, not fitted); default and FCS "
        "have no counterpart there.", "",
        markdown_table(table), "",
        f"Findings: {sum(f['holds'] for f in found)} of {len(found)} hold", "",
        *[f"- **{f['id']}** ({'holds' if f['holds'] else 'does not hold'}): {f['claim']}. "
          f"{f['evidence']}." for f in found], ""])
    with open(os.path.join(out, "real.md"), "w") as fh:
        fh.write(md)
    if echo is not None:
        echo("On this machine: median makespan (s) and ratio to gang", table)
        echo("Real findings", pd.DataFrame(found)[["id", "holds", "evidence"]])
    return {"real_findings_held": sum(f["holds"] for f in found),
            "real_findings": len(found), "real": med, "real_model": model}
