"""``parsched bench``: simulator speed."""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

from parsched.config import BarrierConfig, BatchConfig, PoolsConfig
from parsched.display import jsonable
from parsched.errors import (
    ConfigError,
)


def cmd_bench(args: argparse.Namespace) -> int:
    """Time a simulator: any simulated model (default pools), or the Gymnasium stepper.

    pools: D=20, pool_size=30, --jobs jobs, no warm-up, one replication, no job
    records, one worker thread; reports simulated events per second.
    barrier: Feitelson & Rudolph's machine with n=10, l=3, k=--iterations (50000), under gang
    and local scheduling (--wait busy by default), best of --repeat runs;
    reports measured-gang iterations per second (k / wall) and all gangs'
    iterations per second (gang_iterations / wall).
    batch: --trace (default the shared KTH-SP2 trace, 28,475 jobs), or --lublin N
    (a generated workload: N jobs on --procs processors at offered load --load),
    under fcfs, easy and conservative, best of --repeat runs; reports jobs per
    second of the simulation alone, of the whole call (reading or generating,
    simulating) and the time with the DataFrames built, and peak memory.
    `cargo run --release -p parsched-sim --example batch` times the Rust side
    alone (and larger traces with concat=N).
    cosched: Nagar et al.'s workload 5 (four LIFE(12) jobs on 8 workstations) under Local
    and PB at --scale (default 0.25 of the paper's 25 s jobs), one
    replication, best of --repeat runs; reports simulated events per second.
    `cargo bench -p parsched-sim --bench cosched` is the criterion version.
    fcs: seed 002's Table 1 under default, gang and fcs at --scale (default
    0.25 of the paper's iterations), one replication, best of --repeat runs;
    reports simulated events per second.
    fcs_figure: seed 002's Figures 1-2 (4 programs, 0-4 stressors, default and
    gang) on both machines (es40, potomac) at --scale (default 0.25), best of
    --repeat runs; reports simulated events per second.
    gym: the Gymnasium environment (parsched.gym) on --trace (default KTH-SP2), 256-job
    episodes, a trivial agent (always window slot 0), --seconds each (default 3, resets
    included): BatchEnv stepped directly, through gymnasium.make (its wrappers), and
    BatchVectorEnv with 8 and 32 environments; reports steps per second. The batch bench
    also times a Python priority (FCFS order, one call per pass) against built-in EASY.
    regions: seed 004's memlat (Figure 9's defaults) and balance workloads,
    best of --repeat runs of the standard and the region machine; reports runs
    per second (one run: both machines on the same work).
    """
    return BENCHES[args.model](args)


def _bench_pools(args: argparse.Namespace) -> int:
    from parsched.sim.api import simulate

    if args.jobs < 1:
        raise ConfigError("--jobs", f"{args.jobs} is out of range", "integer >= 1")
    cfg = PoolsConfig(D=20.0, pool_size=30, jobs=args.jobs, warmup=0, reps=1)
    t0 = time.perf_counter()
    res = simulate(cfg, records=False, workers=1)
    total = time.perf_counter() - t0
    s = res.summary
    sim_wall = float(s["wall_seconds"]) or total
    out = {
        "jobs": int(s["jobs"]),
        "events": int(s["events"]),
        "wall_seconds": sim_wall,
        "events_per_second": s["events"] / sim_wall if sim_wall > 0 else None,
        "jobs_per_second": s["jobs"] / sim_wall if sim_wall > 0 else None,
        "total_seconds": total,
        "mean_response_time": s["mean_response_time"],
    }
    if args.json:
        print(json.dumps(jsonable(out)))
    else:
        print(f"bench: {out['jobs']} jobs, {out['events']} events in {sim_wall:.3f} s "
              f"(simulator), {total:.3f} s total")
        if out["events_per_second"] is not None:
            print(f"       {out['events_per_second']:,.0f} events/s, "
                  f"{out['jobs_per_second']:,.0f} jobs/s")
    return 0


def _bench_barrier(args: argparse.Namespace) -> int:
    from parsched.sim.api import simulate_barrier

    if args.iterations < 1:
        raise ConfigError("--iterations", f"{args.iterations} is out of range", "integer >= 1")
    rows = []
    for sched in ("gang", "local"):
        cfg = BarrierConfig(n=10, l=3, k=args.iterations, sched=sched, wait=args.wait)
        wall, total, res = _best(args, simulate_barrier, cfg)
        s = res.summary
        rows.append({
            "sched": sched, "wait": args.wait, "n": 10, "l": 3, "k": args.iterations,
            "wall_seconds": wall, "total_seconds": total, "events": int(s["events"]),
            "iterations_per_second": args.iterations / wall,
            "gang_iterations": int(s["gang_iterations"]),
            "gang_iterations_per_second": s["gang_iterations"] / wall,
            "events_per_second": s["events"] / wall,
            "time_per_iteration": s["time_per_iteration"],
        })
    if args.json:
        print(json.dumps(jsonable({"model": "barrier", "runs": rows})))
    else:
        for r in rows:
            print(f"bench barrier {r['sched']:5s} ({r['wait']}): n=10 l=3 k={r['k']} in "
                  f"{r['wall_seconds']:.3f} s: {r['iterations_per_second']:,.0f} measured "
                  f"iterations/s, {r['gang_iterations_per_second']:,.0f} all-gang "
                  f"iterations/s, {r['events_per_second']:,.0f} events/s")
    return 0


def _bench_cosched(args: argparse.Namespace) -> int:
    from parsched.config import CoschedConfig

    return _bench_events(
        args, "cosched", "W5", "scheme", "completion_time", "completion",
        [({"workload": 5, "scheme": s},
          lambda s=s: CoschedConfig(workload=5, scheme=s, scale=args.scale, reps=1, seed=1))
         for s in ("Local", "PB")])


def _bench_fcs(args: argparse.Namespace) -> int:
    from parsched.config import FcsConfig

    return _bench_events(
        args, "fcs", "Table 1", "scheme", "makespan", "makespan",
        [({"scheme": s}, lambda s=s: FcsConfig(scheme=s, scale=args.scale, reps=1, seed=1))
         for s in ("default", "gang", "fcs")])


def _bench_fcs_figure(args: argparse.Namespace) -> int:
    from parsched.config import FcsFigureConfig

    return _bench_events(
        args, "fcs_figure", "Figures 1-2", "machine", "work_s", "one program's work",
        [({"machine": m}, lambda m=m: FcsFigureConfig(machine=m, scale=args.scale))
         for m in ("es40", "potomac")])


def _bench_events(args: argparse.Namespace, model: str, what: str, label: str, measure: str,
                  word: str, runs: list[tuple[dict[str, Any], Any]]) -> int:
    """Events per second of each of ``runs`` (labels, config factory) at
    ``--scale``, best of ``--repeat``; each row also holds the result's summary
    ``measure``, and is printed under its ``label``."""
    if not (0 < args.scale <= 1):
        raise ConfigError("--scale", f"{args.scale} is out of range", "0 < scale <= 1")
    rows = []
    for labels, make in runs:
        res = _events_row(args, make(), rows, **labels)
        rows[-1][measure] = res.summary[measure]
    if args.json:
        print(json.dumps(jsonable({"model": model, "repeat": args.repeat, "runs": rows})))
        return 0
    width = max(len(r[label]) for r in rows)
    for r in rows:
        print(f"bench {model} {what} {r[label]:{width}s} (scale {r['scale']}): "
              f"{r['events']:,} events in {r['wall_seconds']:.3f} s = "
              f"{r['events_per_second']:,.0f} events/s; {word} {r[measure]:.1f} s simulated "
              f"(best of {args.repeat})")
    return 0


def _bench_regions(args: argparse.Namespace) -> int:
    from parsched.config import RegionsConfig
    from parsched.sim.regions import simulate_regions

    rows = []
    for workload in ("memlat", "balance"):
        cfg = RegionsConfig(workload=workload)
        wall, _, res = _best(args, simulate_regions, cfg)
        rows.append({"workload": workload, "accesses": cfg.accesses, "wall_seconds": wall,
                     "runs_per_second": 1.0 / wall if wall > 0 else None,
                     "normalized_performance": res.normalized_performance})
    if args.json:
        print(json.dumps(jsonable({"model": "regions", "repeat": args.repeat, "runs": rows})))
    else:
        for r in rows:
            print(f"bench regions {r['workload']:7s}: standard and region machines in "
                  f"{r['wall_seconds'] * 1e3:.3f} ms = {r['runs_per_second']:,.0f} runs/s "
                  f"(best of {args.repeat})")
    return 0


def _best(args: argparse.Namespace, simulate: Any, cfg: Any) -> tuple[float, float, Any]:
    """The fastest of ``--repeat`` runs of ``simulate(cfg)``: (the simulation's
    own wall time, or the call's when it reports none; the call's; the result)."""
    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = simulate(cfg)
        total = time.perf_counter() - t0
        wall = float(res.summary.get("wall_seconds") or 0.0) or total
        if best is None or wall < best[0]:
            best = (wall, total, res)
    assert best is not None
    return best


def _events_row(args: argparse.Namespace, cfg: Any, rows: list[dict[str, Any]],
                **labels: Any) -> Any:
    """Appends the events-per-second row of the fastest of ``--repeat`` runs
    of ``cfg`` (one worker); returns that run's result."""
    from parsched.sim.api import simulate

    wall, _, res = _best(args, lambda c: simulate(c, workers=1), cfg)
    events = int(res.summary["events"])
    rows.append({**labels, "scale": args.scale, "events": events, "wall_seconds": wall,
                 "events_per_second": events / wall if wall > 0 else None})
    return res


def _bench_batch(args: argparse.Namespace) -> int:
    import resource

    from parsched.reproduce import batch as reproduce_batch
    from parsched.sim.batch import check_trace, simulate_batch

    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    if args.lublin is not None and args.trace is not None:
        raise ConfigError("--lublin", "given with --trace", "one of --trace FILE, --lublin N")
    base: BatchConfig
    if args.lublin is not None:
        base = BatchConfig(workload="lublin", workload_jobs=args.lublin, procs=args.procs,
                           workload_load=args.load)
        source = (f"Lublin-Feitelson model, {args.lublin} jobs, {args.procs} processors, "
                  f"offered load {args.load:g} (generated in memory; generation counted in "
                  "the whole call)")
        path = None
    else:
        path = check_trace(args.trace or os.path.join(reproduce_batch.default_traces_dir(),
                                                      "KTH-SP2-1996-2.1-cln.swf.gz"))
        base = BatchConfig(trace=path)
        source = path
    rows = []
    for policy in ("fcfs", "easy", "conservative"):
        cfg = base.with_(policy=policy)
        best_sim = best_total = best_frames = math.inf
        jobs = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = simulate_batch(cfg)
            t1 = time.perf_counter()
            _ = res.jobs, res.queue
            t2 = time.perf_counter()
            best_total = min(best_total, t1 - t0)
            best_frames = min(best_frames, t2 - t0)
            best_sim = min(best_sim, float(res.summary["wall_seconds"]))
            jobs = int(res.summary["jobs"])
            del res, _
        rows.append({
            "policy": policy, "jobs": jobs, "sim_seconds": best_sim,
            "jobs_per_second": jobs / best_sim if best_sim > 0 else None,
            "total_seconds": best_total,
            "total_jobs_per_second": jobs / best_total if best_total > 0 else None,
            "with_dataframes_seconds": best_frames,
        })
    # a Python priority giving EASY's own order: the cost of one call per pass
    best = math.inf
    for _ in range(args.repeat):
        res = simulate_batch(base.with_(policy="easy"), priority=lambda q: q["submit"])
        best = min(best, float(res.summary["wall_seconds"]))
    rows.append({"policy": "easy+python priority", "jobs": int(res.summary["jobs"]),
                 "sim_seconds": best, "jobs_per_second": int(res.summary["jobs"]) / best,
                 "total_seconds": best, "total_jobs_per_second": None,
                 "with_dataframes_seconds": best})
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(jsonable({"model": "batch", "trace": path, "source": source,
                                    "repeat": args.repeat, "peak_rss_mb": peak_mb,
                                    "runs": rows})))
    else:
        print(f"bench batch: {source}")
        for r in rows:
            if r["total_jobs_per_second"] is None:
                print(f"bench batch {r['policy']} {r['jobs']} jobs: simulation "
                      f"{r['sim_seconds'] * 1e3:.1f} ms = {r['jobs_per_second']:,.0f} jobs/s "
                      f"(best of {args.repeat})")
                continue
            print(f"bench batch {r['policy']:12s} {r['jobs']} jobs: simulation "
                  f"{r['sim_seconds'] * 1e3:.1f} ms = {r['jobs_per_second']:,.0f} jobs/s; "
                  f"whole call {r['total_seconds'] * 1e3:.0f} ms = "
                  f"{r['total_jobs_per_second']:,.0f} jobs/s; with the DataFrames "
                  f"{r['with_dataframes_seconds'] * 1e3:.0f} ms (best of {args.repeat})")
        by = {r["policy"]: r["sim_seconds"] for r in rows}
        if by.get("easy"):
            print(f"bench batch: conservative / easy simulation time "
                  f"{by['conservative'] / by['easy']:.1f}x; python priority / built-in easy "
                  f"{by['easy+python priority'] / by['easy']:.1f}x")
        print(f"bench batch: peak resident memory of this process {peak_mb:.0f} MB")
    return 0




def _bench_gym(args: argparse.Namespace) -> int:
    import gymnasium
    import numpy as np

    from parsched import gym as pgym
    from parsched.reproduce import batch as reproduce_batch
    from parsched.sim.batch import check_trace

    if not args.seconds > 0:
        raise ConfigError("--seconds", f"{args.seconds}", "a number > 0")
    path = check_trace(args.trace or os.path.join(reproduce_batch.default_traces_dir(),
                                                  "KTH-SP2-1996-2.1-cln.swf.gz"))

    def single(env: Any) -> tuple[float, float]:
        """Steps per second and whole episodes per second (resets included)."""
        env.reset(seed=0)
        n = eps = 0
        t0 = time.perf_counter()
        while (dt := time.perf_counter() - t0) < args.seconds:
            for _ in range(1000):
                _, _, term, _, _ = env.step(0)
                n += 1
                if term:
                    env.reset()
                    eps += 1
        return n / dt, eps / dt

    rows = []
    rate, eps = single(pgym.BatchEnv(path))
    rows.append({"env": "BatchEnv", "envs": 1, "steps_per_second": rate,
                 "episodes_per_second": eps, "jobs_per_second": eps * 256})
    env = gymnasium.make("parsched/Batch-v0", trace=path)
    rate, eps = single(env)
    rows.append({"env": "gymnasium.make", "envs": 1, "steps_per_second": rate,
                 "episodes_per_second": eps, "jobs_per_second": eps * 256})
    for k in (8, 32):
        venv = pgym.BatchVectorEnv(k, path)
        venv.reset(seed=0)
        a = np.zeros(k, dtype=np.int64)
        calls = 0
        t0 = time.perf_counter()
        while (dt := time.perf_counter() - t0) < args.seconds:
            for _ in range(100):
                venv.step(a)
                calls += 1
        rows.append({"env": "BatchVectorEnv", "envs": k,
                     "steps_per_second": calls * k / dt, "episodes_per_second": None,
                     "jobs_per_second": None})
    if args.json:
        print(json.dumps(jsonable({"model": "gym", "trace": path, "runs": rows})))
    else:
        print(f"bench gym: {path}, 256-job episodes, window 128, agent: always slot 0")
        for r in rows:
            jobs = (f" = {r['episodes_per_second']:,.0f} episodes/s = "
                    f"{r['jobs_per_second']:,.0f} jobs scheduled/s"
                    if r["jobs_per_second"] else "")
            print(f"bench gym {r['env']:15s} x{r['envs']:<3d} {r['steps_per_second']:12,.0f} "
                  f"steps/s{jobs}")
    return 0


def _bench_generic(args: argparse.Namespace) -> int:
    """A model with no benchmark of its own: its defaults through its generic
    run, the best of ``--repeat`` runs."""
    from parsched.config.table import row
    from parsched.sim.generic import simulate_generic
    from parsched.sim.models import MODELS

    cfg = MODELS[args.model].config()
    wall, _, res = _best(args, simulate_generic, cfg)
    headline = row(args.model)["headline"]
    out = {"model": args.model, "repeat": args.repeat, "wall_seconds": wall,
           "runs_per_second": 1.0 / wall if wall > 0 else None,
           headline or "summary": res.summary.get(headline) if headline else res.summary}
    if args.json:
        print(json.dumps(jsonable(out)))
    else:
        print(f"bench {args.model}: its defaults in {wall * 1e3:.3f} ms = "
              f"{out['runs_per_second']:,.0f} runs/s (best of {args.repeat})")
    return 0


#: The models with a benchmark of their own (and the Gymnasium environment).
_OWN = {"pools": _bench_pools, "barrier": _bench_barrier, "batch": _bench_batch,
        "cosched": _bench_cosched, "fcs": _bench_fcs, "fcs_figure": _bench_fcs_figure,
        "regions": _bench_regions}


def _benches() -> dict[str, Any]:
    from parsched.config.table import rows

    out = {r["name"]: _OWN.get(r["name"], _bench_generic) for r in rows("simulated")
           if r["name"] in _OWN or r["run"]}
    return {**out, "gym": _bench_gym}


#: ``parsched bench MODEL``: the benchmark of each simulated model of the
#: core's table (its own, or the generic one), and of the Gymnasium stepper.
BENCHES = _benches()


def add_parser(sub: Any, fmt: Any) -> None:
    """Registers ``parsched bench [MODEL]`` on the CLI's subparsers."""
    from parsched.cli.common import _doc

    bp = sub.add_parser("bench", help=_doc(cmd_bench).splitlines()[0],
                        description=_doc(cmd_bench), formatter_class=fmt)
    bp.add_argument("model", nargs="?", choices=tuple(BENCHES),
                    default="pools", help="which simulator to time (default pools)")
    bp.add_argument("--model", dest="model_opt", choices=tuple(BENCHES),
                    default=None, help="same as the positional MODEL")
    bp.add_argument("--jobs", type=int, default=100000, metavar="N",
                    help="pools: jobs to simulate (default 100000)")
    bp.add_argument("--iterations", "-k", type=int, default=50000, metavar="K",
                    help="barrier: iterations of the measured gang (default 50000)")
    bp.add_argument("--wait", choices=("busy", "block", "twophase", "yield"), default="busy",
                    help="barrier: waiting strategy (default busy)")
    bp.add_argument("--trace", metavar="FILE", default=None,
                    help="batch: SWF trace (default: the shared KTH-SP2 trace)")
    bp.add_argument("--lublin", type=int, default=None, metavar="N",
                    help="batch: a generated Lublin-Feitelson workload of N jobs instead of "
                         "a trace (e.g. 450000; with --procs and --load)")
    bp.add_argument("--procs", type=int, default=8192, metavar="P",
                    help="batch --lublin: processors (default 8192)")
    bp.add_argument("--load", type=float, default=0.9, metavar="L",
                    help="batch --lublin: offered load (default 0.9)")
    bp.add_argument("--repeat", type=int, default=5, metavar="N",
                    help="every model but pools, and gym: runs per "
                         "configuration, best reported (default 5)")
    bp.add_argument("--scale", type=float, default=0.25, metavar="F",
                    help="cosched, fcs, fcs_figure: fraction of the paper's iterations "
                         "(default 0.25)")
    bp.add_argument("--seconds", type=float, default=3.0, metavar="S",
                    help="gym: seconds per measurement (default 3)")
    bp.add_argument("--json", action="store_true", help="print one JSON object")
    bp.set_defaults(func=cmd_bench)
