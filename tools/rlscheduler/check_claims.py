#!/usr/bin/env python3
"""Run-time checks of the issue's claims (a), (c), (d), (e) on HPCEnv, unmodified source in ./src.
Usage (from /work/notes/rlscheduler):  PYTHONPATH=shim:src /work/main/.venv/bin/python check_claims.py
"""
import contextlib
import io
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "src"), os.path.join(HERE, "shim")]
import HPCSimPickJobs as H  # noqa: E402

TRACE = os.path.join(HERE, "data", "KTH-SP2-1996-2.1-cln.noneg.swf")  # made by measure.py --clean 1


def make(seed=0, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        e = H.HPCEnv(**kw)
        e.seed(seed)
        e.my_init(workload_file=TRACE)
    return e


# (a) WFP3 / UNICEF see scheduled_time == -1 for every queued job they rank
e = make()
e.reset()
seen = []
orig_wfp, orig_uni = e.wfp_score, e.uni_score
e.wfp_score = lambda j: (seen.append(("wfp", j.scheduled_time, e.current_timestamp - j.submit_time)), orig_wfp(j))[1]
e.uni_score = lambda j: (seen.append(("uni", j.scheduled_time, e.current_timestamp - j.submit_time)), orig_uni(j))[1]
wfp_total = sum(e.schedule_curr_sequence_reset(e.wfp_score).values())
uni_total = sum(e.schedule_curr_sequence_reset(e.uni_score).values())
st = {s for _, s, _ in seen}
print(f"(a) score calls: {len(seen)}; distinct scheduled_time values seen by wfp/uni: {sorted(st)}")
print(f"    so 'waiting_time' = -1 - submit_time (e.g. {-1 - e.loads[e.start].submit_time} for the window's first job),"
      f" while the true wait (now - submit) ranged {min(w for *_, w in seen)}..{max(w for *_, w in seen)} s")


# same window, WFP3 with the true wait (current_timestamp - submit_time), for comparison
def wfp_true(j):
    return -np.power(float(e.current_timestamp - j.submit_time) / j.request_time, 3) * j.request_number_of_processors


def uni_true(j):
    return -(e.current_timestamp - j.submit_time + 1e-15) / (np.log2(j.request_number_of_processors + 1e-15) * j.request_time)


wfp_t = sum(e.schedule_curr_sequence_reset(wfp_true).values())
uni_t = sum(e.schedule_curr_sequence_reset(uni_true).values())
fcfs = sum(e.schedule_curr_sequence_reset(e.fcfs_score).values())
print(f"    window start {e.start}, avg bsld: repo-WFP3 {wfp_total:.2f} vs true-wait WFP3 {wfp_t:.2f};"
      f" repo-UNICEF {uni_total:.2f} vs true-wait UNICEF {uni_t:.2f}; FCFS {fcfs:.2f}")

# (c) the "random" visible list is never used; visible jobs come from SJF + smallest only
def interleave(lists):
    out, idx = [], 0
    while len(out) < H.MAX_QUEUE_SIZE:
        for L in lists:
            j = L[idx]
            if j not in out and len(out) < H.MAX_QUEUE_SIZE:
                out.append(j)
        idx += 1
    return [j.job_id for j in out]


e = make()
e.reset()
hits = same_as_sjf_small = same_as_with_random = 0
for _ in range(200000):
    if len(e.job_queue) > H.MAX_QUEUE_SIZE:
        q = list(e.job_queue)
        sjf = sorted(q, key=e.sjf_score)[:H.MAX_QUEUE_SIZE]
        small = sorted(q, key=e.smallest_score)[:H.MAX_QUEUE_SIZE]
        rnd = random.sample(q, H.MAX_QUEUE_SIZE)
        vis = [p[0].job_id for p in e.pairs if p[0] is not None]
        same_as_sjf_small += vis == interleave([sjf, small, sjf])   # what line 591 does
        same_as_with_random += vis == interleave([sjf, small, rnd])  # what the comment/name suggests
        hits += 1
        if hits >= 50:
            break
    r = e.step(0)
    if r[2]:
        e.reset()
print(f"(c) over {hits} steps with queue > {H.MAX_QUEUE_SIZE}: visible list == SJF/smallest/SJF interleave in"
      f" {same_as_sjf_small}; == SJF/smallest/random interleave in {same_as_with_random}")

# (d) env.seed seeds only the window choice; shuffles use Python's global `random`
starts = []
obs = []
for gseed in (1, 2):
    random.seed(gseed)
    e = make(seed=0, shuffle=True)
    o, _ = e.reset()
    starts.append(e.start)
    o, *_ = e.step(0)
    for _ in range(30):
        r = e.step(0)
        if r[2]:
            break
        o = r[0]
    obs.append(o)
print(f"(d) env.seed(0) twice, different random.seed: window starts {starts};"
      f" obs identical after 31 steps with shuffle=True? {np.array_equal(obs[0], obs[1])}")

# (e) API shape
e = make()
r0 = e.reset()
r1 = e.step(0)
print(f"(e) reset() -> {type(r0).__name__} of {len(r0)} ({r0[0].shape}, {r0[1].shape});"
      f" step() -> {type(r1).__name__} of {len(r1)}: [obs, {r1[1]}, {r1[2]}, {r1[3]}, {r1[4]}, {r1[5]}]")
while not r1[2]:
    r1 = e.step(0)
print(f"    terminal step -> {[None if x is None else (round(x, 3) if not isinstance(x, bool) else x) for x in r1]}")
