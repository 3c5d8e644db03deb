#!/usr/bin/env python3
"""Times one ``parsched.sweep`` (24 pools points, 10,000 jobs each) on 1 thread,
2 threads, 2 processes and a 2-worker Dask ``LocalCluster``, interleaved over
ROUNDS rounds (default 3); prints the median and best of each and checks that
the rows are identical (``wall_seconds`` aside) on every executor.

    .venv/bin/python tools/bench_sweep_executors.py [ROUNDS]
"""

import concurrent.futures as cf
import os
import statistics
import sys
import time

import parsched
from parsched.sim.api import process_executor


def configs() -> list[parsched.PoolsConfig]:
    base = parsched.PoolsConfig(jobs=10000, warmup=1000, reps=1)
    return [base.with_(D=d, pool_size=p) for d in (5, 10, 20, 30)
            for p in (5, 10, 15, 20, 30, 60)]


def main() -> None:
    import distributed

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    t = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster)
    dask_start = time.perf_counter() - t
    makers = {
        "1 thread": lambda: cf.ThreadPoolExecutor(1),
        "2 threads": lambda: cf.ThreadPoolExecutor(2),
        "2 processes (spawned)": lambda: process_executor(workers=2),
        "Dask LocalCluster, 2": lambda: client,
    }
    times: dict[str, list[float]] = {k: [] for k in makers}
    ref = None
    for _ in range(rounds):
        for name, make in makers.items():
            t = time.perf_counter()
            ex = make()
            df = parsched.sweep(configs(), executor=ex, progress=False)
            if isinstance(ex, cf.Executor):
                ex.shutdown()
            times[name].append(time.perf_counter() - t)
            rows = df.drop(columns=["wall_seconds"])
            assert ref is None or rows.equals(ref), name
            ref = rows
    print(f"load average {os.getloadavg()[0]:.1f}; LocalCluster start {dask_start:.2f} s; "
          "rows identical on every executor")
    for name, ts in times.items():
        print(f"{name:24s} median {statistics.median(ts):6.2f} s   best {min(ts):6.2f} s")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
