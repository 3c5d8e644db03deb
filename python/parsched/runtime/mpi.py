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

__all__ = ["IMPLS", "SLOTS", "RankStats", "build_dir", "library", "mpirun", "read_stats"]

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
