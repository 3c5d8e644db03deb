"""Seed 003's design space on this Linux machine, with real MPI programs
(``parsched reproduce cosched --real``).

Mixes of two two-rank MPI jobs, each rank loading libparsched_mpi, of
different communication intensities (:data:`PROGRAMS`): the paper's LIFE
(``life``: a halo row each way per generation), a multigrid-like halo
exchange (``mg_halo``: V-cycles whose coarse levels exchange after a few
microseconds of work), a public benchmark (HPC Challenge, Debian's ``hpcc``,
Open MPI) and ``mpi_bsp`` (CPU work between barriers: every 10 ms, ``bsp-lo``)
— each verified (life and mg_halo check their result and exit 1 if it is
wrong; hpcc's own checks must say ``Success=1``). They run under plain Linux
with busy-polling ranks (``default``), gang scheduling, FCS, and the
``cosched`` policy's ten schemes (ranks pinned one per CPU, the machine made a
network of workstations), interleaved, ``reps`` times. The output says which
of the paper's findings hold here, how the schemes compare with gang
scheduling, and what the simulator predicts for the same mixes
(docs/runtime.md, "MPI programs"). Needs root, cgroups, MPICH and ``make mpi``
(hpcc and Open MPI for the mix with hpcc).
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from parsched.runtime.policies import choices

#: (name, RunSpec keys, the library's waiting strategy for the job or None for the scheme's)
CONFIGS: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("default (busy)", {"policy": "default"}, "busy"),
    ("gang (busy)", {"policy": "gang", "slot": "50ms"}, "busy"),
    ("fcs (busy)", {"policy": "fcs", "slot": "50ms"}, "busy"),
    # every scheme of the runtime's cosched policy (Table 1's, its table's order)
    *((s, {"policy": "cosched", "cosched_scheme": s}, None)
      for s in choices("cosched", "scheme") or ()),
)
#: Seed 003's implicit schemes (Table 1's).
IMPLICIT = tuple(c[0] for c in CONFIGS if c[1]["policy"] == "cosched")
#: The programs, with what one run does ("work" is about the CPU seconds of
#: one job alone on this machine).
PROGRAMS = {
    "bsp-lo": "mpi_bsp: a barrier after every 10 ms of CPU work on each rank",
    "bsp-hi": "mpi_bsp: a barrier after every 0.5 ms of CPU work on each rank",
    "life": "life 512x1024 board: one halo row each way per generation (about 0.3 ms of "
            "work a generation)",
    "mg": "mg_halo N=1024: V-cycles of 9 levels, 118 halo exchanges a cycle (the coarse "
          "levels' after microseconds of work), an allreduce a cycle",
    "hpcc": "HPC Challenge 1.5 (built from Debian's source for MPICH by `make mpi`; else "
            "Debian's binary, Open MPI): HPL N=2000 (1000 quick) on a 1x2 grid, then DGEMM, "
            "STREAM, PTRANS, RandomAccess, FFT and the latency and bandwidth rings",
}
#: Barrier interval (µs) of mpi_bsp's intensities.
GRAIN_US = {"bsp-lo": 10_000, "bsp-hi": 500}
#: Generations and V-cycles per second of work, on this machine alone (life: 0.33 ms a
#: generation, mg_halo: 7 ms a cycle).
LIFE_GENS_PER_S, MG_CYCLES_PER_S = 3000, 140
#: mg_halo N=1024's halo exchanges a cycle (7 for each of 8 levels, 60 on the
#: coarsest, 2 for the residual).
MG_EXCHANGES = 7 * 8 + 60 + 2
MIXES = {"bsp lo+lo": ("bsp-lo", "bsp-lo"), "life+bsp-lo": ("life", "bsp-lo"),
         "life+mg": ("life", "mg"), "hpcc+life": ("hpcc", "life")}
#: The mix of two fine-grained programs (the issue's "gang at least 1.4x faster").
HI_MIX = "life+mg"


def missing(mixes=MIXES) -> str | None:
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
    for prog in ("mpi_bsp", "life", "mg_halo"):
        if not os.path.exists(os.path.join(mpi.build_dir("mpich"), prog)):
            return f"target/mpi/mpich/{prog} is not built: run `make mpi`"
    if any("hpcc" in kinds for kinds in mixes.values()) and hpcc_binary() is None:
        return ("needs HPC Challenge: `make mpi` builds it from Debian's source for MPICH "
                "(or installs Debian's, for Open MPI, as root)")
    return None


def hpcc_binary() -> tuple[str, str] | None:
    """(implementation, path) of the HPC Challenge to run: the one `make mpi`
    built from source for MPICH, else Debian's (Open MPI, with the library
    built for it); None if neither is here."""
    from parsched.runtime import mpi

    built = os.path.join(mpi.build_dir("mpich"), "hpcc")
    if os.path.exists(built):
        return "mpich", built
    deb = shutil.which("hpcc")
    if deb and shutil.which("mpirun.openmpi"):
        try:
            mpi.library("openmpi")
        except FileNotFoundError:
            return None
        return "openmpi", deb
    return None


def _mpich(prog: str, args: list[str], wait: str | None) -> list[str]:
    """``mpirun.mpich -np 2`` of ``prog`` (a path, or one of target/mpi/mpich's
    programs) with the library, waiting as ``wait`` says (None: as the policy says; hydra passes
    the controller's variables on to the ranks)."""
    from parsched.runtime import mpi

    env = ["-env", "LD_PRELOAD", mpi.library("mpich")]
    if wait:
        env += ["-env", "PARSCHED_MPI_WAIT", wait]
    return ["mpirun.mpich", "-np", "2", *env, os.path.join(mpi.build_dir("mpich"), prog), *args]


def mpi_bsp_job(iters: int, grain_us: int, wait: str | None, *, mults: str | None = None,
                name: str | None = None) -> dict[str, Any]:
    """A job (``run_jobs`` spec) of two MPICH ranks of ``mpi_bsp`` with the
    library: ``iters`` barriers, ``grain_us`` of CPU work before each (times
    each rank's multiplier), waiting as ``wait`` says (None: as the policy
    says)."""
    argv = _mpich("mpi_bsp", [str(iters), str(grain_us)] + ([mults] if mults else []), wait)
    job: dict[str, Any] = {"argv": argv, "width": 2}
    if name:
        job["name"] = name
    return job


#: The controller's variables an Open MPI job must forward to its ranks (mpirun
#: passes only those named with -x).
_FORWARD = ("PARSCHED_FCS_SYNC_FILE", "PARSCHED_FCS_CLASS_FILE", "PARSCHED_MPI_WAIT",
            "PARSCHED_MPI_SPIN_US", "PARSCHED_MPI_BELL", "PARSCHED_MPI_ARRIVALS")


def _hpcc_input(n: int) -> str:
    """hpccinf.txt: one HPL problem of size ``n`` (NB 80) on a 1x2 grid, the
    other tests at their defaults (the HPL input format of HPC Challenge)."""
    lines = ["HPLinpack benchmark input file", "parsched reproduce cosched --real",
             "HPL.out      output file name (if any)", "8            device out",
             "1            # of problems sizes (N)", f"{n}         Ns",
             "1            # of NBs", "80           NBs", "0            PMAP process mapping",
             "1            # of process grids (P x Q)", "1            Ps", "2            Qs",
             "16.0         threshold", "1            # of panel fact", "2            PFACTs",
             "1            # of recursive stopping criterium", "4            NBMINs",
             "1            # of panels in recursion", "2            NDIVs",
             "1            # of recursive panel fact.", "1            RFACTs",
             "1            # of broadcast", "1            BCASTs",
             "1            # of lookahead depth", "1            DEPTHs",
             "2            SWAP", "64           swapping threshold", "0            L1 in",
             "0            U  in", "1            Equilibration",
             "8            memory alignment in double",
             "##### This line (no. 32) is ignored (it serves as a separator). ######",
             "0            Number of additional problem sizes for PTRANS",
             "1200         values of N",
             "0            number of additional blocking sizes for PTRANS",
             "40           values of NB"]
    return "\n".join(lines) + "\n"


def hpcc_verified(workdir: str) -> bool:
    """Whether the last HPC Challenge run in ``workdir`` passed its own checks."""
    try:
        with open(os.path.join(workdir, "hpccoutf.txt")) as fh:
            text = fh.read()
    except OSError:
        return False
    tail = text[text.rfind("Begin of Summary section"):]
    return "Success=1" in tail and "FAILED" not in text


def program_job(kind: str, work_s: float, wait: str | None,
                workdir: str | None = None) -> dict[str, Any]:
    """A ``run_jobs`` job of two ranks of program ``kind`` (:data:`PROGRAMS`)
    with about ``work_s`` CPU seconds of work (hpcc: its N, 2000 from 1 s
    up); ``workdir`` (hpcc): a fresh directory for its input and output."""
    from parsched.runtime import mpi

    if kind in GRAIN_US:
        g = GRAIN_US[kind]
        return mpi_bsp_job(max(1, round(work_s * 1e6 / g)), g, wait, name=kind)
    if kind == "life":
        gens = max(4, 4 * round(work_s * LIFE_GENS_PER_S / 4))
        return {"argv": _mpich("life", ["512", "1024", str(gens)], wait), "width": 2,
                "name": kind}
    if kind == "mg":
        cycles = max(1, round(work_s * MG_CYCLES_PER_S))
        return {"argv": _mpich("mg_halo", ["1024", str(cycles)], wait), "width": 2,
                "name": kind}
    if kind == "hpcc":
        assert workdir is not None, "hpcc needs a working directory"
        with open(os.path.join(workdir, "hpccinf.txt"), "w") as fh:
            fh.write(_hpcc_input(2000 if work_s >= 1 else 1000))
        impl, prog = hpcc_binary() or ("openmpi", "hpcc")
        if impl == "mpich":
            return {"argv": _mpich(prog, [], wait), "width": 2, "name": kind, "cwd": workdir}
        xs = ["-x", f"LD_PRELOAD={mpi.library('openmpi')}"]
        if wait:
            xs += ["-x", f"PARSCHED_MPI_WAIT={wait}"]
        fwd = " ".join(_FORWARD)
        script = (f'set -- ; for v in {fwd}; do eval "[ -n \\"\\${{$v+x}}\\" ]" && '
                  'set -- "$@" -x "$v"; done; exec mpirun.openmpi --allow-run-as-root -np 2 '
                  '--bind-to none ' + " ".join(map(shlex.quote, xs)) + ' "$@" ' + shlex.quote(prog))
        return {"argv": ["sh", "-c", script], "width": 2, "name": kind, "cwd": workdir}
    raise ValueError(f"program {kind!r}: allowed: {', '.join(PROGRAMS)}")


def measure(*, quick: bool, progress: Callable[[dict[str, Any]], None] | None = None,
            configs=CONFIGS, mixes=MIXES) -> list[dict[str, Any]]:
    """One row per (rep, mix, configuration): the makespan (s), NaN if a job
    failed or its result did not verify."""
    import parsched

    work_s, reps = (0.4, 1) if quick else (1.5, 3)
    rows = []
    for rep in range(reps):
        for mix, kinds in mixes.items():
            for name, spec, wait in configs:
                with tempfile.TemporaryDirectory(prefix="parsched-real-") as d:
                    dirs = [os.path.join(d, str(i)) for i in range(len(kinds))]
                    for x in dirs:
                        os.mkdir(x)
                    jobs = [program_job(k, work_s, wait, x)
                            for k, x in zip(kinds, dirs, strict=True)]
                    t0 = time.monotonic()
                    out = parsched.run_jobs({**spec, "jobs": jobs})
                    wall = time.monotonic() - t0
                    ok = all(j["success"] for j in out["jobs"]) and all(
                        hpcc_verified(x) for k, x in zip(kinds, dirs, strict=True) if k == "hpcc")
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


def bsp_shape(kind: str, work_s: float) -> tuple[int, int] | None:
    """The simulator's reading of a program as bulk-synchronous work: (grain in
    µs, iterations), from its structure and the rates above (None: hpcc, whose
    phases the model does not know)."""
    if kind in GRAIN_US:
        return GRAIN_US[kind], max(1, round(work_s * 1e6 / GRAIN_US[kind]))
    if kind == "life":
        gens = max(4, 4 * round(work_s * LIFE_GENS_PER_S / 4))
        return max(1, round(1e6 / LIFE_GENS_PER_S)), gens
    if kind == "mg":
        cycles = max(1, round(work_s * MG_CYCLES_PER_S))
        return max(1, round(1e6 / MG_CYCLES_PER_S / MG_EXCHANGES)), cycles * MG_EXCHANGES
    return None


def predict(*, quick: bool, mixes=MIXES) -> dict[str, dict[str, float]]:
    """The simulator's completion time (s) for each mix and configuration that
    has a counterpart (the same jobs as ``bsp_jobs``; mixes with hpcc have none)."""
    from parsched import _core

    work_s, reps = (0.4, 1) if quick else (1.5, 3)
    out: dict[str, dict[str, float]] = {}
    for mix, kinds in mixes.items():
        shapes = [bsp_shape(k, work_s) for k in kinds]
        if any(sh is None for sh in shapes):
            continue
        bsp = ";".join(f"{k}{i}:{g}:{n}:1/1" for i, (k, (g, n)) in
                       enumerate(zip(kinds, shapes, strict=True)))  # type: ignore[misc]
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

    hi = med.get(HI_MIX, {})
    if hi:
        g, d = hi["gang (busy)"], hi["default (busy)"]
        add("gang-vs-linux", "gang at least 1.4x faster than plain Linux with busy polling "
            f"({HI_MIX})", d >= 1.4 * g, f"default {d:.2f} s, gang {g:.2f} s ({d / g:.2f}x)")
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
        add("paper-pb-best", f"paper: PB outperforms the other implicit schemes ({HI_MIX}, "
            "within 5%)", pb <= 1.05 * min(others.values()),
            ", ".join(f"{s} {v:.2f}" for s, v in sorted(hi.items()) if s in IMPLICIT))
        add("paper-local-worst", "paper: Local is the worst implicit scheme as communication "
            f"grows ({HI_MIX}, within 5%)", hi["Local"] >= 0.95 * max(hi[s] for s in IMPLICIT),
            f"Local {hi['Local']:.2f} s, worst {max(hi[s] for s in IMPLICIT):.2f} s")
        add("paper-sb-slow", "paper: spin-block far slower than PB at high communication "
            f"(SB >= 1.5x PB, {HI_MIX})", hi["SB"] >= 1.5 * pb,
            f"SB {hi['SB']:.2f} s, PB {pb:.2f} s")
    return out


def run(out: str, *, quick: bool, echo=None, progress: bool = True) -> dict[str, Any]:
    """Measures, writes real.csv and real.md to ``out``; returns the headlines."""
    import pandas as pd

    from parsched.display import markdown_table

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
        "Mixes of two two-rank MPI jobs, each verified; median makespan over the "
        "repetitions (real.csv). The programs:", "",
        *[f"- `{k}`: {v}" for k, v in PROGRAMS.items()], "",
        "'model': the simulator's prediction for the same jobs read as bulk-synchronous "
        "work (`bsp_jobs`; life a generation per exchange, mg_halo its exchanges evenly "
        "spread, cosched_real.bsp_shape) on two one-CPU nodes with a CFS-like local "
        "scheduler and shared-memory message costs (2 us, 0.5 us overheads), the "
        "library's 100 us spin (cosched_real.MODEL; stated, not fitted); hpcc, default "
        "and FCS have no counterpart there.", "",
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
