"""``parsched reproduce pools|gang|cosched|batch``."""

from __future__ import annotations

import argparse
import json
import time

from ._cli_common import (
    _console,
    _print_table,
)
from ._report import jsonable


def _make_executor(workers: int | None):
    import concurrent.futures as cf

    from .api import default_executor, spawned_pool

    if workers == 1:
        return cf.ThreadPoolExecutor(max_workers=1)
    if workers:
        return spawned_pool(workers)
    return default_executor()


def _stop_executor(executor, interrupted: bool) -> None:
    from .api import stop_executor

    stop_executor(executor, interrupted)


def cmd_reproduce_gang(args: argparse.Namespace) -> int:
    """Reproduce Feitelson & Rudolph (JPDC 1992): model vs simulation vs paper.

    (a) eqs. 6, 8, 10, 12, 13 against simulation over t_p (0.05-200 ms), loads
    1-4 and gang sizes 2, 4, 10, each flagged in or out of its regime; (b)
    experiments 1-4 of section 3.3 with the Makbilan parameters (eq. 14, Table 1);
    (c) the phase diagram of Figure 9 (sigma = 1/2) from the formulas and from
    simulation; (d) two-phase waiting beside busy waiting and blocking. Writes CSV
    tables, PNG plots and summary.md to --out; --quick runs fewer points and
    shorter runs (well under a minute); --json prints the headline numbers.
    """
    from . import reproduce_gang
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            res = reproduce_gang.run(
                tmp, quick=args.quick, executor=executor, progress=not quiet,
                echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
            )
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, *.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0


def cmd_reproduce_cosched(args: argparse.Namespace) -> int:
    """Reproduce Nagar et al. (SPAA 1999): ten coscheduling schemes on a NOW.

    Tables 3-4 (the ten schemes of Table 1 on the nine workloads of Table 2,
    plus gang scheduling and batch FCFS as references) beside the paper's
    numbers with the rank agreement per workload; Table 5 (individual job
    times, mean, CV on W3 and W5); Figures 2-3 (CPU shares at one node over
    time); every checkable claim of section 3 checked, with an explanation
    where it does not hold; the candidate mechanisms of the slow spin-block
    rows; sensitivity to the interrupt and context-switch costs. Full runs are
    at the paper's size (about 25 s alone per job) with 3 replications;
    --quick runs a quarter of the iterations, one replication (about a
    minute on 2 cores). Writes CSV tables, PNG plots and summary.md to --out;
    --json prints the headline numbers.
    """
    from . import reproduce_cosched
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            res = reproduce_cosched.run(
                tmp, quick=args.quick, executor=executor, progress=not quiet,
                echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
            )
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        obj["findings"] = [{k: f[k] for k in ("id", "holds")} for f in res["findings"]]
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, *.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0


def cmd_reproduce_batch(args: argparse.Namespace) -> int:
    """Run every shared workload trace under FCFS, EASY, conservative and gang.

    Every .swf / .swf.gz file in --traces (default: <repo>/../shared/traces) runs
    under the four policies with the default configuration (machine size from the
    header, default loading rules; gang: mpl 4, quantum 60 s). Writes batch.csv and
    batch.md (jobs, procs, average wait, average bounded slowdown, utilization,
    makespan, wall time, and what loading dropped or repaired) to --out, checks
    determinism by running the smallest trace twice under EASY, and draws that
    trace's Gantt chart and utilization under EASY and gang (PNG).
    """
    from . import reproduce_batch
    from ._io import atomic_dir, check_output_dir

    traces = args.traces or reproduce_batch.default_traces_dir()
    reproduce_batch.find_traces(traces)  # fail early, before any output
    check_output_dir(args.out, "--out")
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    with atomic_dir(args.out) as tmp:
        res = reproduce_batch.run(
            tmp, traces,
            echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
        )
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(jsonable({"out": args.out, "seconds": elapsed, **res})))
    else:
        con.print(f"wrote {args.out}/ (batch.csv, batch.md, *.png) in {elapsed:.1f} s",
                  highlight=False)
    return 0 if res["deterministic"] else 1


def cmd_reproduce_pools(args: argparse.Namespace) -> int:
    """Regenerate Zhou & Brecht's (1991) Figures 1, 3-8 as CSV, PNG and summary.md.

    Every configuration of every figure runs as one deduplicated sweep. Full runs
    use 10000 jobs per replication (1000 warm-up) and 5 replications; --quick uses
    2000 (200) and 3 with fewer points. Each table is printed with the paper's
    stated numbers beside ours (Fig. 3: 342 and 265 at D=20, lower bound ~127;
    Fig. 8: A = 12.4 at P=60 vs 14.9 at P=120).
    """
    from . import reproduce
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    executor = _make_executor(args.workers)
    con = _console()
    start = time.perf_counter()
    interrupted = False
    try:
        with atomic_dir(args.out) as tmp:
            reproduce.run(tmp, quick=args.quick, executor=executor, progress=True,
                          echo=lambda title, obj: _print_table(con, title, obj))
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _stop_executor(executor, interrupted)
    con.print(f"wrote {args.out}/ (fig*.csv, fig*.png, summary.md) in "
              f"{time.perf_counter() - start:.1f} s", highlight=False)
    return 0




def cmd_reproduce_fcs(args: argparse.Namespace) -> int:
    """Reproduce Frachtenberg's parallel desktop (seed 002): flexible coscheduling.

    Table 1 (three load-imbalanced jobs on two dual-processor nodes under
    Default = the Linux 2.6 O(1) scheduler, FCFS, gang scheduling, spin-block
    and FCS) simulated beside the paper's numbers, each scheme's makespan
    against the optimum (total demand over processors, 240 s), the classes FCS
    assigned over time, the paper's checkable findings with an explanation
    where one does not hold, and the open choices (F rows, filling, slot,
    spin, the O(1) bonus) as variants. --quick runs a tenth of the iterations
    (times scaled back); --real also measures Table 1 on this machine with
    the Linux runtime (cgroups needed). Writes CSV tables, table1.png and
    summary.md to --out; --json prints the headline numbers.
    """
    from . import reproduce_fcs
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    with atomic_dir(args.out) as tmp:
        res = reproduce_fcs.run(
            tmp, quick=args.quick, real=args.real,
            progress=None if quiet else (lambda m: con.print(f"  {m}", highlight=False)),
            echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
        )
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        obj["findings"] = [{k: f[k] for k in ("id", "holds")} for f in res["findings"]]
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, table1.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0


def cmd_reproduce_regions(args: argparse.Namespace) -> int:
    """Reproduce Lee & Schwan's region scheduling (seed 004) in simulation.

    Figure 9's gain maps of memlat's cache unification (working set x access
    time) on the Clovertown- and Westmere-like machines in three variants
    (default latency-bound timing with random access; a bandwidth-bound miss
    cost; sequential sweeps under exact LRU), the balancing experiment (two
    large and two small programs, §5.2), the conditions 1-3 boundaries the
    simulation gives, and the paper's checkable findings. --quick runs a
    smaller grid (seconds); --real adds this machine's measurements when
    parsched.regions_real is present. Writes CSV tables, fig9_*.png and
    summary.md to --out; --json prints the headline numbers.
    """
    from . import reproduce_regions
    from ._io import atomic_dir, check_output_dir

    check_output_dir(args.out, "--out")
    con = _console()
    start = time.perf_counter()
    quiet = args.json
    with atomic_dir(args.out) as tmp:
        res = reproduce_regions.run(
            tmp, quick=args.quick, real=args.real,
            progress=None if quiet else (lambda m: con.print(f"  {m}", highlight=False)),
            echo=None if quiet else (lambda title, obj: _print_table(con, title, obj)),
        )
    elapsed = time.perf_counter() - start
    if args.json:
        obj = dict(res["headlines"])
        obj["out"] = args.out
        obj["seconds"] = elapsed
        obj["findings"] = [{k: f[k] for k in ("id", "holds")} for f in res["findings"]]
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ (*.csv, fig9_*.png, summary.md) in {elapsed:.1f} s",
                  highlight=False)
    return 0
