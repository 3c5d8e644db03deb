"""``parsched bench``: simulator speed."""

from __future__ import annotations

import argparse
import json
import math
import os
import time

from parsched.config import BarrierConfig, BatchConfig, PoolsConfig
from parsched.errors import (
    ConfigError,
)
from parsched.report.common import jsonable


def cmd_bench(args: argparse.Namespace) -> int:
    """Time a simulator: pools (default), barrier, batch or cosched.

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
    """
    if args.model == "barrier":
        return _bench_barrier(args)
    if args.model == "batch":
        return _bench_batch(args)
    if args.model == "cosched":
        return _bench_cosched(args)
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
    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    rows = []
    for sched in ("gang", "local"):
        cfg = BarrierConfig(n=10, l=3, k=args.iterations, sched=sched, wait=args.wait)
        best = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = simulate_barrier(cfg)
            total = time.perf_counter() - t0
            wall = float(res.summary["wall_seconds"]) or total
            if best is None or wall < best[0]:
                best = (wall, total, res)
        wall, total, res = best
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
    from parsched.sim.cosched import simulate_cosched

    if args.repeat < 1:
        raise ConfigError("--repeat", f"{args.repeat} is out of range", "integer >= 1")
    if not (0 < args.scale <= 1):
        raise ConfigError("--scale", f"{args.scale} is out of range", "0 < scale <= 1")
    rows = []
    for scheme in ("Local", "PB"):
        cfg = CoschedConfig(workload=5, scheme=scheme, scale=args.scale, reps=1, seed=1)
        best = None
        for _ in range(args.repeat):
            res = simulate_cosched(cfg, workers=1)
            run = res.runs.iloc[0]
            wall = float(run["wall_seconds"])
            if best is None or wall < best[0]:
                best = (wall, int(run["events"]), res.completion_time)
        wall, events, t = best
        rows.append({"workload": 5, "scheme": scheme, "scale": args.scale, "events": events,
                     "wall_seconds": wall,
                     "events_per_second": events / wall if wall > 0 else None,
                     "completion_time": t})
    if args.json:
        print(json.dumps(jsonable({"model": "cosched", "repeat": args.repeat, "runs": rows})))
    else:
        for r in rows:
            print(f"bench cosched W5 {r['scheme']:5s} (scale {r['scale']}): {r['events']:,} "
                  f"events in {r['wall_seconds']:.3f} s = {r['events_per_second']:,.0f} "
                  f"events/s; completion {r['completion_time']:.1f} s simulated "
                  f"(best of {args.repeat})")
    return 0


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
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(jsonable({"model": "batch", "trace": path, "source": source,
                                    "repeat": args.repeat, "peak_rss_mb": peak_mb,
                                    "runs": rows})))
    else:
        print(f"bench batch: {source}")
        for r in rows:
            print(f"bench batch {r['policy']:12s} {r['jobs']} jobs: simulation "
                  f"{r['sim_seconds'] * 1e3:.1f} ms = {r['jobs_per_second']:,.0f} jobs/s; "
                  f"whole call {r['total_seconds'] * 1e3:.0f} ms = "
                  f"{r['total_jobs_per_second']:,.0f} jobs/s; with the DataFrames "
                  f"{r['with_dataframes_seconds'] * 1e3:.0f} ms (best of {args.repeat})")
        by = {r["policy"]: r["sim_seconds"] for r in rows}
        if by.get("easy"):
            print(f"bench batch: conservative / easy simulation time "
                  f"{by['conservative'] / by['easy']:.1f}x")
        print(f"bench batch: peak resident memory of this process {peak_mb:.0f} MB")
    return 0


