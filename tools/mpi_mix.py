"""Seed 003's schemes and the references on a mix of real MPI jobs, on this machine.

Runs the same mix of two-rank MPI jobs (MPICH, each rank with
libparsched_mpi) under plain Linux (``default``, busy polling), gang
scheduling, FCS, and the ``cosched`` policy's schemes without demand-based
coscheduling (the DCS schemes; with the workstations layout), ``--reps``
times each, interleaved, and
prints the median makespan per configuration with its ratio to gang.

    python tools/mpi_mix.py [--jobs 2] [--iters 400] [--grain-us 2000] [--reps 3]
                            [--mults 1,1]

Needs root, cgroups and `make mpi`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from parsched.reproduce.cosched_real import CONFIGS, mpi_bsp_job


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--grain-us", type=int, default=2000)
    ap.add_argument("--mults", default="1,1")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)

    import parsched

    times: dict[str, list[float]] = {name: [] for name, _, _ in CONFIGS}
    for rep in range(a.reps):
        for name, spec, wait in CONFIGS:
            job = mpi_bsp_job(a.iters, a.grain_us, wait, mults=a.mults)
            t0 = time.monotonic()
            out = parsched.run_jobs({**spec, "jobs": [dict(job) for _ in range(a.jobs)]})
            wall = time.monotonic() - t0
            ok = all(j["success"] for j in out["jobs"])
            times[name].append(wall if ok else float("nan"))
            print(f"rep {rep + 1} {name:16s} {wall:7.2f} s{'' if ok else ' FAILED'}",
                  flush=True)
    gang = statistics.median(times["gang (busy)"])
    print(f"\nmedian makespan of {a.jobs} jobs x {a.iters} x {a.grain_us} us "
          f"(mults {a.mults}), {a.reps} reps:")
    for name, xs in times.items():
        m = statistics.median(xs)
        print(f"  {name:16s} {m:7.2f} s  ({m / gang:.2f} x gang)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
