#!/usr/bin/env python3
"""Times the Python hooks of gang admission (``gang_place``, batch and barrier machines)
and the periodic boost (``boost``) against the built-in rules they reproduce: the median
of 3 whole calls each (5 for the barrier machine), the number of hook calls, the time per
call above the built-in, and whether the results are the same
(docs/policies/gang-scheduler.md, docs/policies/cosched.md).

Usage: .venv/bin/python tools/bench_hooks.py [TRACES_DIR]   (default ../shared/traces)
       .venv/bin/python tools/bench_hooks.py --barrier   (the barrier machine's gang_place only)
"""
import statistics
import sys
import time

import numpy as np

import parsched
from parsched import BatchConfig


def first_fit(v):
    fits = (v["slot_free"] >= v["procs"]).nonzero()[0]
    if len(fits):
        return int(fits[0])
    return v["slots"] if v["slots"] < v["mpl"] else None


def pb_rule(v):
    ok = (v["pending"] > 0) & ~v["done"]
    if v["skip_running"]:
        ok &= ~v["running"]
    n = len(ok)
    order = (np.arange(n) + v["next"]) % n
    hits = order[ok[order]]
    return int(hits[0]) if len(hits) else None


def timed(f, n=3):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), r


class Count:
    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, v):
        self.n += 1
        return self.f(v)


def bench_gang(path: str, name: str) -> None:
    cfg = BatchConfig(policy="gang")
    tb, rb = timed(lambda: parsched.simulate_batch(path, cfg))
    c = Count(first_fit)
    parsched.simulate_batch(path, cfg, gang_place=c)
    th, rh = timed(lambda: parsched.simulate_batch(path, cfg, gang_place=first_fit))
    same = (rb.jobs["starting_time"] == rh.jobs["starting_time"]).all()
    print(f"gang {name}: jobs {len(rb.jobs)} built-in {tb:.3f} s, gang_place {th:.3f} s "
          f"({th / tb:.1f}x), {c.n} calls, {(th - tb) / c.n * 1e6:.1f} us/call, same={same}")


def bench_cosched() -> None:
    cfg = {"scheme": "PB", "workload": 5, "scale": 0.02, "reps": 2}
    tb, rb = timed(lambda: parsched.simulate_cosched(cfg, workers=1))
    c = Count(pb_rule)
    parsched.simulate_cosched(cfg, boost=c)
    th, rh = timed(lambda: parsched.simulate_cosched(cfg, boost=pb_rule))
    print(f"cosched {cfg}: built-in (workers=1) {tb:.3f} s, boost {th:.3f} s "
          f"({th / tb:.1f}x), {c.n} calls, {(th - tb) / c.n * 1e6:.1f} us/call, "
          f"same={rb.completion_time == rh.completion_time}")


def bench_barrier() -> None:
    """The barrier machine's gang_place: asked once per gang at build time, so its cost
    is a few calls per run, whatever k."""
    from parsched import BarrierConfig

    def summary(r):
        return {k: v for k, v in r.summary.items() if k != "wall_seconds"}

    for name, cfg in [("default (n=10, P=10, l=3, k=50000, gang, busy)", BarrierConfig()),
                      ("n=4, P=8, l=3, tq=5, no skew, gang, busy",
                       BarrierConfig(n=4, P=8, l=3, tq=5.0, skew=False)),
                      ("n=4, P=8, l=3, tq=5, no skew, gang, block, k=20000",
                       BarrierConfig(n=4, P=8, l=3, tq=5.0, skew=False, wait="block",
                                     k=20000))]:
        tb, rb = timed(lambda cfg=cfg: parsched.simulate_barrier(cfg), n=5)
        c = Count(first_fit)
        parsched.simulate_barrier(cfg, gang_place=c)
        th, rh = timed(lambda cfg=cfg: parsched.simulate_barrier(cfg, gang_place=first_fit),
                       n=5)
        print(f"barrier {name}: built-in {tb:.4f} s, gang_place {th:.4f} s "
              f"({th / tb:.2f}x), {c.n} calls, events {rb.summary['events']}, "
              f"same={summary(rb) == summary(rh)}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--barrier"]
    if "--barrier" in sys.argv[1:]:
        bench_barrier()
        sys.exit(0)
    traces = args[0] if args else "../shared/traces"
    for name in ["HPC2N-subset.swf.gz", "lublin_256.swf.gz"]:
        bench_gang(f"{traces}/{name}", name)
    bench_cosched()
    bench_barrier()
