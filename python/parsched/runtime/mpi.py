"""MPI programs under parsched: the profiling library and its statistics.

``libparsched_mpi.so`` (crates/parsched-runtime/mpi, built by ``make mpi`` for
Open MPI and MPICH) is loaded into every rank with ``LD_PRELOAD``. It publishes
how each process waits in the job's statistics file
(docs/formats/fcs-sync-file.md) and waits as ``PARSCHED_MPI_WAIT`` says (busy,
spin-block, spin-yield; docs/runtime.md, "MPI programs")::

    from parsched.runtime import mpi
    lib = mpi.library("openmpi")
    argv = mpi.mpirun("openmpi", 2, ["./a.out"], {"PARSCHED_MPI_WAIT": "spin-block",
                                                 "LD_PRELOAD": lib})
    stats = mpi.read_stats("/dev/shm/job.sync")   # one row per rank
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from parsched._io import source_root

__all__ = ["IMPLS", "SLOTS", "SPIN_GRID_US", "RankStats", "build_dir", "library", "mpirun",
           "read_stats", "tune_spin"]

#: The MPI implementations the library is built for (Debian's wrapper suffixes).
IMPLS = ("openmpi", "mpich")
#: Ranks with a slot in the statistics file.
SLOTS = 127
_BASE = 4096
_EXT = 64
MAGIC = b"PSYNC1\0\0"


def build_dir(impl: str) -> str:
    """Where ``make mpi`` puts the library and test programs for ``impl``."""
    if impl not in IMPLS:
        raise ValueError(f"impl: {impl!r} is not one of {', '.join(IMPLS)}")
    return os.path.join(source_root(), "target", "mpi", impl)


def library(impl: str) -> str:
    """The path of ``libparsched_mpi.so`` built for ``impl`` (FileNotFoundError,
    naming ``make mpi``, when it is not built)."""
    path = os.path.join(build_dir(impl), "libparsched_mpi.so")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is not built: run `make mpi`")
    return path


def mpirun(impl: str, np: int, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """An ``mpirun`` command line for ``impl`` that starts ``np`` ranks of
    ``argv`` with ``env`` set in every rank (Open MPI: ``-x``, unbound, allowed
    as root; MPICH's hydra: ``-env``)."""
    if impl == "openmpi":
        cmd = ["mpirun.openmpi", "-np", str(np), "--bind-to", "none", "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
    elif impl == "mpich":
        cmd = ["mpirun.mpich", "-np", str(np)]
        for k, v in env.items():
            cmd += ["-env", k, v]
    else:
        raise ValueError(f"impl: {impl!r} is not one of {', '.join(IMPLS)}")
    return [*cmd, *argv]


@dataclass(frozen=True)
class RankStats:
    """One rank's counters (docs/formats/fcs-sync-file.md)."""

    rank: int
    syncs: int
    wait_s: float
    spin_cpu_s: float
    blocked_s: float
    sent_to: int
    consumed: int
    waiting: int  # 0 running, 1 spinning, 2 blocked
    pid: int = 0
    tid: int = 0
    last_arrival_ns: int = 0

    @property
    def pending(self) -> int:
        """Messages sent to this rank that it has not received yet."""
        return self.sent_to - self.consumed


def read_stats(path: str) -> list[RankStats] | None:
    """The ranks' counters in a statistics file (``None`` without the magic:
    nothing published). Ranks that never counted anything are left out."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != MAGIC:
        return None
    out = []
    for r in range(SLOTS):
        syncs, wait, spin, blocked = struct.unpack_from("=4Q", data, 8 + 32 * r)
        sent = consumed = waiting = pid = tid = last = 0
        if len(data) >= _BASE + _EXT * (r + 1):
            (_bell, waiting, sent, consumed, _since, pid, tid,
             last) = struct.unpack_from("=2I3Q2IQ", data, _BASE + _EXT * r)
        if syncs or sent or consumed or pid:
            out.append(RankStats(r, syncs, wait * 1e-9, spin * 1e-9, blocked * 1e-9,
                                 sent, consumed, waiting, pid, tid, last))
    return out


#: The spins ``tune_spin`` tries (µs), fixed before any program is run: from a
#: few polls to a Linux time slice.
SPIN_GRID_US = (10, 30, 100, 300, 1000, 3000, 10000)
#: Spins whose median makespan is within this fraction of the best count as
#: tied (real runs are noisy); the shortest of them wins.
TIE = 0.03


def _makespan(cmds: list[list[str]], timeout_s: float) -> float:
    """Starts every command at once (each in its own process group), waits for
    all; the wall seconds until the last ends. A failed copy raises
    RuntimeError with its output; Ctrl-C kills every copy."""
    import signal
    import subprocess
    import time

    t0 = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True) for c in cmds]
    try:
        outs = [p.communicate(timeout=max(1.0, timeout_s - (time.monotonic() - t0)))[0]
                for p in procs]
    except BaseException:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        raise
    wall = time.monotonic() - t0
    for p, out in zip(procs, outs, strict=True):
        if p.returncode != 0:
            raise RuntimeError(f"a copy exited {p.returncode}: {out.strip()[-400:]}")
    return wall


def tune_spin(impl: str, argv: Sequence[str], *, np: int = 2, copies: int = 4,
              reps: int = 3, grid: Sequence[int] = SPIN_GRID_US, timeout_s: float = 600.0,
              progress=None) -> dict:
    """Seed 003's procedure for the spin time ("an empirical approach to
    quantify the optimal spin time for a given application", §2), on this
    machine: ``copies`` copies of the MPI program (``np`` ranks each, with the
    library, spin-block) run at once, as the study's four processes per
    workstation did, once per spin of ``grid`` (µs), ``reps`` times; the spin
    with the lowest median makespan wins, and of spins within
    :data:`TIE` of it the shortest. Returns ``spin_us``, ``rows`` (spin, rep,
    makespan) and ``medians`` (spin → s)."""
    import statistics

    if not grid or any(int(s) <= 0 for s in grid):
        raise ValueError("grid: spins must be positive whole microseconds")
    if copies < 1 or np < 1 or reps < 1:
        raise ValueError("copies, np and reps must be at least 1")
    lib = library(impl)
    rows = []
    for rep in range(reps):
        for s in grid:  # interleaved: a drift in the machine's load hits every spin
            env = {"LD_PRELOAD": lib, "PARSCHED_MPI_WAIT": "spin-block",
                   "PARSCHED_MPI_SPIN_US": str(int(s))}
            cmds = [mpirun(impl, np, list(argv), env) for _ in range(copies)]
            t = _makespan(cmds, timeout_s)
            rows.append({"spin_us": int(s), "rep": rep, "makespan_s": t})
            if progress:
                progress(rows[-1])
    medians = {int(s): statistics.median(r["makespan_s"] for r in rows if r["spin_us"] == int(s))
               for s in grid}
    best = min(medians.values())
    spin = min(s for s, m in medians.items() if m <= best * (1 + TIE))
    return {"spin_us": spin, "rows": rows, "medians": medians}
