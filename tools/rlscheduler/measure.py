#!/usr/bin/env python3
"""Measure the speed of RLScheduler's HPCEnv (DIR-LAB/deep-batch-scheduler, HPCSimPickJobs.py)
on the KTH-SP2 trace with a trivial agent (first unmasked action, mask rule copied from
ppo-pick-jobs.py:388-394). The environment code is used unmodified from ./src; `gym` and
`tensorflow` are satisfied by tiny stand-ins in ./shim (see shim/*/__init__.py).

Usage (from /work/notes/rlscheduler):
  PYTHONPATH=shim:src /work/main/.venv/bin/python measure.py --backfil 0
  PYTHONPATH=shim:src /work/main/.venv/bin/python measure.py --backfil 1
Options: --episodes 20 --time-limit 60 --seed 0 --clean 0/1 --trace data/KTH-SP2-1996-2.1-cln.swf --profile
Long runs: add --clean 1 --episodes 1000 (the raw trace crashes HPCEnv in ~1% of windows, see ensure_trace).
"""
import argparse
import contextlib
import gzip
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for p in (os.path.join(HERE, "src"), os.path.join(HERE, "shim")):
    if p not in sys.path:
        sys.path.insert(0, p)

import numpy as np  # noqa: E402

GZ_TRACE = "/work/shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
MIRROR = "/work/.mirror/DIR-LAB+deep-batch-scheduler/repo"


def ensure_trace(path, clean):
    # RLScheduler's Workloads() opens a plain-text SWF with open(); decompress once.
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with gzip.open(GZ_TRACE, "rb") as fi, open(path, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    if not clean:
        return path
    # "clean" variant: drop jobs whose allocated AND requested processors are both <= 0
    # (KTH-SP2 has exactly one: job 27313, "-1 -1" procs). HPCEnv accepts such a job
    # (ceil(-1/1) = -1 nodes <= free nodes), SimpleCluster.allocate returns FakeList(-1),
    # and the later release() dies with "ValueError: __len__() should return >= 0".
    cpath = path[:-4] + ".noneg.swf"
    if not os.path.exists(cpath):
        with open(path) as fi, open(cpath, "w") as fo:
            for line in fi:
                f = line.split()
                if not line.startswith(";") and len(f) >= 8 and int(f[4]) <= 0 and int(f[7]) <= 0:
                    continue
                fo.write(line)
    return cpath


def first_valid_action(obs, JOB_FEATURES, MAX_QUEUE_SIZE):
    # Same rule as ppo-pick-jobs.py:388-394: a slot is masked if it equals the
    # padding row [0,1,1,1,1,1,1,0] or the all-ones skip row.
    rows = obs.reshape(MAX_QUEUE_SIZE, JOB_FEATURES)
    pad = np.array([0] + [1] * (JOB_FEATURES - 2) + [0])
    invalid = np.all(rows == pad, axis=1) | np.all(rows == 1, axis=1)
    valid = np.flatnonzero(~invalid)
    return int(valid[0]) if valid.size else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backfil", type=int, default=0)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--score_type", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trace", default=os.path.join(HERE, "data", "KTH-SP2-1996-2.1-cln.swf"))
    ap.add_argument("--clean", type=int, default=0,
                    help="1: drop the job(s) with -1 processors that crash HPCEnv (see ensure_trace)")
    ap.add_argument("--profile", action="store_true", help="run under cProfile and print top functions")
    args = ap.parse_args()

    import HPCSimPickJobs as H

    trace = ensure_trace(args.trace, args.clean)
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):  # the env prints on construction/load
        env = H.HPCEnv(shuffle=False, backfil=bool(args.backfil), skip=bool(args.skip),
                       job_score_type=args.score_type, batch_job_slice=0, build_sjf=False)
        env.seed(args.seed)  # same order as ppo-pick-jobs.py:248-250
        t0 = time.perf_counter()
        env.my_init(workload_file=trace)
        t_init = time.perf_counter() - t0

    prof = None
    if args.profile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()

    reset_times, step_times, agent_times, ep_steps, ep_starts, big_queue_steps = [], [], [], [], [], 0
    crash = None
    wall0 = time.perf_counter()
    for ep in range(args.episodes):
        t = time.perf_counter()
        try:
            obs, _critic_obs = env.reset()
        except ValueError as e:  # the -1-processor job, see ensure_trace
            crash = {"episode": ep, "start_index": int(env.start), "error": repr(e)}
            print("CRASH in reset:", json.dumps(crash), file=sys.stderr)
            break
        reset_times.append(time.perf_counter() - t)
        ep_starts.append(int(env.start))
        n, st, at = 0, 0.0, 0.0
        while True:
            t = time.perf_counter()
            a = first_valid_action(obs, H.JOB_FEATURES, H.MAX_QUEUE_SIZE)
            t1 = time.perf_counter()
            if len(env.job_queue) > H.MAX_QUEUE_SIZE:
                big_queue_steps += 1
            try:
                o, _r, d, _r2, _sjf, _f1 = env.step(a)  # step returns a 6-element list
            except ValueError as e:
                crash = {"episode": ep, "start_index": int(env.start), "error": repr(e)}
                print("CRASH in step:", json.dumps(crash), file=sys.stderr)
                break
            t2 = time.perf_counter()
            at += t1 - t
            st += t2 - t1
            n += 1
            if d:
                break
            obs = o
        if crash:
            break
        step_times.append(st)
        agent_times.append(at)
        ep_steps.append(n)
        wall = time.perf_counter() - wall0  # up to the end of the last completed episode
        if wall >= args.time_limit:
            break

    if prof is not None:
        prof.disable()
        import pstats
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
        print(s.getvalue())

    total_steps = sum(ep_steps)
    total_step_t = sum(step_times)
    total_reset_t = sum(reset_times)
    try:
        commit = subprocess.run(["git", "--git-dir", MIRROR, "rev-parse", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except Exception:
        commit = "?"
    import gymnasium
    res = {
        "repo_commit": commit,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium(shimmed as gym)": gymnasium.__version__,
        "trace": os.path.basename(trace),
        "jobs_loaded": env.loads.size(),
        "max_procs": env.loads.max_procs,
        "backfil": bool(args.backfil),
        "skip": bool(args.skip),
        "job_score_type": args.score_type,
        "seed": args.seed,
        "profiled": bool(args.profile),
        "clean_trace": bool(args.clean),
        "crash": crash,
        "my_init_s": round(t_init, 4),
        "episodes": len(ep_steps),
        "steps_total": total_steps,
        "steps_per_episode_min_mean_max": [min(ep_steps), round(total_steps / len(ep_steps), 1), max(ep_steps)],
        "steps_with_queue_gt_128": big_queue_steps,
        "step_only_steps_per_s": round(total_steps / total_step_t, 1),
        "step_only_us_per_step": round(1e6 * total_step_t / total_steps, 1),
        "jobs_scheduled_per_s_step_only": round(len(ep_steps) * H.JOB_SEQUENCE_SIZE / total_step_t, 1),
        "agent_us_per_step": round(1e6 * sum(agent_times) / total_steps, 1),
        "reset_ms_mean": round(1e3 * total_reset_t / len(reset_times), 2),
        "reset_ms_min_max": [round(1e3 * min(reset_times), 2), round(1e3 * max(reset_times), 2)],
        "episode_ms_mean_incl_reset": round(1e3 * wall / len(ep_steps), 2),
        "end_to_end_steps_per_s_incl_reset_and_agent": round(total_steps / wall, 1),
        "wall_s": round(wall, 3),
        "episode_start_indices": ep_starts,
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
