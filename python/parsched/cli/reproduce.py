"""``parsched reproduce pools|gang|cosched|batch|fcs``."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

from parsched.cli.common import (
    _console,
    _print_table,
)
from parsched.display import jsonable


def _make_executor(workers: int | None):
    import concurrent.futures as cf

    from parsched.sim.api import process_executor

    if workers == 1:
        return cf.ThreadPoolExecutor(max_workers=1)
    return process_executor(workers=workers)


def _reproduce(args: argparse.Namespace, run, *, wrote: str, executor: bool = True) -> dict:
    """Runs one reproduction the same way for every seed: checks ``--out``,
    writes into it atomically (nothing half-written on an error or Ctrl-C),
    on a process pool of ``--workers`` (stopped at once on Ctrl-C) when the
    reproduction takes one, echoing tables unless ``--json``; then prints the
    headline numbers (``--json``: its ``headlines``, ``out``, ``seconds`` and
    the findings' ids and verdicts) or the line saying what it wrote.

    ``run(tmp, executor, echo, progress)`` does the work; ``echo`` and
    ``progress`` are None under ``--json``."""
    from parsched._io import atomic_dir, check_output_dir
    from parsched.sim.api import owning

    check_output_dir(args.out, "--out")
    con = _console()
    quiet = getattr(args, "json", False)
    echo = None if quiet else (lambda title, obj: _print_table(con, title, obj))
    progress = None if quiet else (lambda m: con.print(f"  {m}", highlight=False))
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        ex = stack.enter_context(owning(_make_executor(args.workers))) if executor else None
        with atomic_dir(args.out) as tmp:
            res = run(tmp, ex, echo, progress)
    elapsed = time.perf_counter() - start
    if quiet:
        obj = dict(res.get("headlines", {}))
        obj["out"] = args.out
        obj["seconds"] = elapsed
        if "findings" in res:
            obj["findings"] = [{k: f[k] for k in ("id", "holds")} for f in res["findings"]]
        print(json.dumps(jsonable(obj)))
    else:
        con.print(f"wrote {args.out}/ ({wrote}) in {elapsed:.1f} s", highlight=False)
    return res


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
    from parsched.reproduce import gang as reproduce_gang

    _reproduce(args, lambda tmp, ex, echo, _p: reproduce_gang.run(
        tmp, quick=args.quick, executor=ex, progress=echo is not None, echo=echo),
        wrote="*.csv, *.png, summary.md")
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
    minute on 2 cores). --real also runs the design space on this machine with
    real MPI programs (parsched.reproduce.cosched_real: mixes of two-rank jobs
    of life, mg_halo, HPC Challenge and mpi_bsp, each verified, under plain
    Linux, gang, FCS and the cosched policy's ten schemes; needs root, cgroups
    and `make mpi`). Writes CSV tables,
    PNG plots and summary.md to --out; --json prints the headline numbers.
    """
    from parsched.reproduce import cosched as reproduce_cosched
    from parsched.reproduce import cosched_real

    real = getattr(args, "real", False)
    if real and (why := cosched_real.missing()):
        from parsched.errors import RuntimeUnavailable

        raise RuntimeUnavailable(f"reproduce cosched --real: {why}")

    def both(tmp, ex, echo, _p):
        res = reproduce_cosched.run(tmp, quick=args.quick, executor=ex,
                                    progress=echo is not None, echo=echo)
        if real:
            got = cosched_real.run(tmp, quick=args.quick, echo=echo, progress=echo is not None)
            res["headlines"].update(got)
            with open(os.path.join(tmp, "real.md")) as src, \
                    open(os.path.join(tmp, "summary.md"), "a") as dst:
                dst.write("\n" + src.read())
        return res

    _reproduce(args, both, wrote="*.csv, *.png, summary.md" + (", real.*" if real else ""))
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
    from parsched.reproduce import batch as reproduce_batch

    traces = args.traces or reproduce_batch.default_traces_dir()
    reproduce_batch.find_traces(traces)  # fail early, before any output

    def run(tmp, _ex, echo, _p):
        res = reproduce_batch.run(tmp, traces, echo=echo)
        return {"headlines": res, **res}

    res = _reproduce(args, run, wrote="batch.csv, batch.md, *.png", executor=False)
    return 0 if res["deterministic"] else 1


def cmd_reproduce_pools(args: argparse.Namespace) -> int:
    """Regenerate Zhou & Brecht's (1991) Figures 1, 3-8 as CSV, PNG and summary.md.

    Every configuration of every figure runs as one deduplicated sweep. Full runs
    use 10000 jobs per replication (1000 warm-up) and 5 replications; --quick uses
    2000 (200) and 3 with fewer points. Each table is printed with the paper's
    stated numbers beside ours (Fig. 3: 342 and 265 at D=20, lower bound ~127;
    Fig. 8: A = 12.4 at P=60 vs 14.9 at P=120).
    """
    from parsched.reproduce import pools as reproduce

    def run(tmp, ex, echo, _p):
        reproduce.run(tmp, quick=args.quick, executor=ex, progress=True, echo=echo)
        return {}

    _reproduce(args, run, wrote="fig*.csv, fig*.png, summary.md")
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
    from parsched.reproduce import fcs as reproduce_fcs

    _reproduce(args, lambda tmp, _ex, echo, progress: reproduce_fcs.run(
        tmp, quick=args.quick, real=args.real, progress=progress, echo=echo),
        wrote="*.csv, table1.png, summary.md", executor=False)
    return 0


def cmd_reproduce_regions(args: argparse.Namespace) -> int:
    """Reproduce Lee & Schwan's region scheduling (seed 004) in simulation.

    Figure 9's gain maps of memlat's cache unification (working set x access
    time) on the Clovertown- and Westmere-like machines in three variants
    (default latency-bound timing with random access; a bandwidth-bound miss
    cost; sequential sweeps under exact LRU), the balancing experiment (two
    large and two small programs, §5.2), the conditions 1-3 boundaries the
    simulation gives, and the paper's checkable findings; then Figure 9 on
    the paper's own axes (the same MB on both machines) with counterfactuals
    (the other machine's micro-schedule cost or timing, the effective cache
    capacity), for "Westmere has a greater range". --quick runs a smaller
    grid (seconds); --real adds this machine's measurements when
    parsched.runtime.regions_real is present. Writes CSV tables, fig9_*.png,
    fig9abs_*.png and summary.md to --out; --json prints the headline
    numbers.
    """
    from parsched.reproduce import regions as reproduce_regions

    _reproduce(args, lambda tmp, _ex, echo, progress: reproduce_regions.run(
        tmp, quick=args.quick, real=args.real, progress=progress, echo=echo),
        wrote="*.csv, fig9_*.png, fig9abs_*.png, summary.md", executor=False)
    return 0


def cmd_tune_cosched(args: argparse.Namespace) -> int:
    """Choose seed 003's spin times the way the paper did, on the model.

    For each application, Spin-Block runs four copies of it (the study's four
    processes per workstation) once per spin time of a grid fixed in advance
    (0.1 ms to 300 ms); the spin with the lowest completion time is that
    application's spin (Nagar et al. §2: "an empirical approach to quantify
    the optimal spin time for a given application"). The paper's tables are
    not read. Also runs each application alone and sets its share of time
    in communication beside Table 2's. `parsched reproduce cosched` runs the
    same procedure first. Pass the result on with
    `--set app_spin_us=...` (µs, in the order LIFE3.5, LIFE12, MG, LU, EP).
    """
    from parsched.reproduce import cosched as rc
    from parsched.reproduce import cosched_tune
    from parsched.sim.api import owning

    plan = rc.Plan.make(args.quick)
    quiet = args.json
    con = _console()
    with owning(_make_executor(args.workers)) as ex:
        res = cosched_tune.run(scale=plan.scale, reps=plan.reps, seed=plan.seed,
                               executor=ex, progress=not quiet)
    spins = res["spins"]
    if quiet:
        print(json.dumps(jsonable({
            "spins_us": dict(zip(cosched_tune.APPS, spins, strict=True)),
            "app_spin_us": cosched_tune.app_spin_arg(spins),
            "tuning": res["tuning"].to_dict(orient="records"),
            "calibration": res["calibration"].to_dict(orient="records")})))
        return 0
    _print_table(con, "SB's completion time (s) on four copies of each application, per spin",
                 cosched_tune.spin_grid(res["tuning"]))
    _print_table(con, "Each application alone against Table 2", res["calibration"])
    con.print("chosen: --set app_spin_us=" + cosched_tune.app_spin_arg(spins),
              highlight=False)
    return 0
