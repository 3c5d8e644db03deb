#!/usr/bin/env python3
"""Seed 002's real Table 1 through ``examples/parsched_run`` (no Python extension needed).

Runs the jobs of ``parsched.runtime.fcs_real`` (three ``bench/bsp`` jobs of P threads, 1 ms grain,
job 1 ``--mult`` 1..2, job 2 2..1, job 3 balanced; ``iters = solo_s / 1 ms``) under each
scheme, repetition-major (schemes interleaved), and prints every run and the median
makespan per scheme. A scheme is ``default``, ``gang`` or ``fcs``, optionally followed by
``:key=value,...``: ``wait=spin|block|spinblock`` (the barrier's waiting) or any RunSpec
key (``fcs:fcs_discovery_fill=true``); ``RUNNER@scheme`` runs it with another
``parsched_run`` binary (e.g. one built from an older commit). ``wait=a/b/c`` gives
each job its own waiting (``fcs:wait=block/block/adaptive``). Each run also prints the
jobs' utilization of the machine (their CPU seconds, from bsp, over P x makespan).

usage: fcs_table1_real.py RUNNER BSP SOLO_S REPS SCHEME [SCHEME ...]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

WAIT = {"default": "block", "gang": "spin", "fcs": "block"}


def main() -> None:
    runner, bsp, solo, reps = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    schemes = sys.argv[5:]
    p = len(os.sched_getaffinity(0))
    iters = round(solo * 1e6 / 1000)
    half = p // 2
    mults = [[1] * half + [2] * (p - half), [2] * half + [1] * (p - half), [1] * p]

    def rate() -> float:
        out = subprocess.run([bsp, "--threads", "1", "--iters", "0"], capture_output=True,
                             text=True, check=True).stdout
        return float(json.loads(out.strip().splitlines()[-1])["loops_per_us"])

    lpu = max(rate() for _ in range(3))
    res: dict[str, list[float]] = {s: [] for s in schemes}
    util: dict[str, list[float]] = {s: [] for s in schemes}
    work = tempfile.mkdtemp(prefix="fcs-table1-")
    for r in range(reps):
        for s in schemes:
            binary, _, rest = s.rpartition("@")
            name, _, extra = rest.partition(":")
            kv = dict(x.split("=", 1) for x in extra.split(",") if x)
            wait = kv.pop("wait", WAIT[name])
            # per-job waiting: wait=block/block/adaptive
            waits = wait.split("/") if "/" in wait else [wait] * 3
            jobs = [{"name": f"job{k + 1}",
                     "argv": [bsp, "--threads", str(p), "--iters", str(iters), "--grain-us",
                              "1000", "--wait", waits[k], "--mult", ",".join(map(str, m)),
                              "--loops-per-us", f"{lpu:.3f}"],
                     "width": p, "stdout": os.path.join(work, f"{name}.{k}.out")}
                    for k, m in enumerate(mults)]
            spec = {"policy": name, "slot": "50ms", "jobs": jobs}
            for k, v in kv.items():
                try:
                    spec[k] = json.loads(v)
                except ValueError:
                    spec[k] = v
            path = os.path.join(work, "spec.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            load = os.getloadavg()[0]
            out = subprocess.run([binary or runner, "--spec", path], capture_output=True,
                                 text=True)
            if out.returncode != 0:
                sys.exit(f"{s}: failed: {out.stderr[-2000:]}")
            o = json.loads(out.stdout)
            times = [j["wall_s"] for j in o["reports"]]
            cpu = 0.0
            for k in range(3):
                with open(os.path.join(work, f"{name}.{k}.out")) as f:
                    cpu += json.loads(f.read().strip().splitlines()[-1])["cpu_s"]
            util[s].append(cpu / (p * max(times)))
            st = o["stats"]
            classes = [" ".join(f"{c}@{t:.1f}" for t, c in j.get("classes", []))
                       for j in o["reports"]]
            res[s].append(max(times))
            print(f"{s:30s} run {r + 1}: jobs {' / '.join(f'{t:.2f}' for t in times)} "
                  f"makespan {max(times):.2f} load {load:.1f} switches {st['switches']} "
                  f"switch_s {st['switch_s']:.3f} ctl_cpu {st['cpu_s']:.2f} "
                  f"dc {st.get('dc_slots', 0)} util {util[s][-1]:.3f}"
                  + (f" classes {classes}" if name == "fcs" else ""),
                  flush=True)
    print(f"optimum {sum(map(sum, mults)) * iters * 1e-3 / p:.2f} s")
    for s in schemes:
        runs = " ".join(f"{x:.2f}" for x in res[s])
        print(f"{s:30s} median {statistics.median(res[s]):.2f}  runs {runs}  "
              f"utilization median {statistics.median(util[s]):.3f}")


if __name__ == "__main__":
    main()
